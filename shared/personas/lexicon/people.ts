import { z } from 'zod';
import { RegexSource, WordList, parseLexicon } from './load';
import raw from './people.json';

// Words about people (people.json): generations, gender, income and the
// generic nouns that say "an audience" without describing it.

const People = z.object({
  about: z.string(),
  generationReferenceYear: z.number().int(),
  generations: z.array(z.object({ label: z.string().min(1), pattern: RegexSource, born: z.tuple([z.number().int(), z.number().int()]) })),
  unbuyableGenerations: RegexSource,
  female: WordList,
  male: WordList,
  highIncome: WordList,
  midIncome: WordList,
  lowIncome: WordList,
  mixedIncome: WordList,
  genericPeople: WordList,
});
const P = parseLexicon('people.json', People, raw);

// Generations are fixed age ranges computed from the usual birth years (Pew)
// at the reference year, so extraction stays deterministic and does not drift
// with the clock. Ages below 16 cannot be bought, so Gen Z starts at 16.
// docs/personas.md lists the same table.
export const GENERATION_REFERENCE_YEAR = P.generationReferenceYear;
export interface Generation {
  label: string;
  pattern: string;
  born: [number, number];
  ageMin: number;
  ageMax: number;
}
export const GENERATIONS: readonly Generation[] = P.generations.map((g) => ({
  ...g,
  ageMin: Math.max(16, GENERATION_REFERENCE_YEAR - g.born[1]),
  ageMax: GENERATION_REFERENCE_YEAR - g.born[0],
}));
/** Entirely below the buyable floor: reported, never clamped into a range. */
export const UNBUYABLE_GENERATIONS = P.unbuyableGenerations;

export const FEMALE_WORDS: readonly string[] = P.female;
export const MALE_WORDS: readonly string[] = P.male;
export const HIGH_INCOME: readonly string[] = P.highIncome;
export const MID_INCOME: readonly string[] = P.midIncome;
export const LOW_INCOME: readonly string[] = P.lowIncome;
export const MIXED_INCOME: readonly string[] = P.mixedIncome;
/** Nouns that name an audience without describing it; never an interest. */
export const GENERIC_PEOPLE: ReadonlySet<string> = new Set(P.genericPeople);
