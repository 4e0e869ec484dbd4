import { genderWord } from './demographics';
import { Clause } from './discourse';
import { COUNTRIES } from './lexicon/countries';
import { SemanticCore } from './persona-schema';
import { esc, uniq } from './text';

/** The rules' reading of a brief, against which any extractor's answer for it is checked. */
export interface Reading {
  text: string;
  roles: readonly Clause[];
  core: SemanticCore;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
// Crude stems, enough to see that "hikers" and "hiking" are the brief's word.
const stem = (w: string) => (w.length > 4 ? w.replace(/(?:ing|ers|er|es|s|ed)$/, '') : w);
const CONTENT = (w: string) => w.length > 2 && !['and', 'the', 'for', 'who', 'with', 'into', 'fans', 'people', 'of'].includes(w);

/**
 * The safety post-checks every extractor's answer passes (docs/personas.md, "What a persona must
 * never do"): what the rules or the answer rule out is in no targeting field, and a target the
 * rules did not read must be said in a clause about the audience. The rules' own answer passes
 * unchanged unless it contradicts itself.
 */
export function guardCore(answer: SemanticCore, reading: Reading): SemanticCore {
  const ref = reading.core;
  const audience = reading.roles
    .filter((c) => c.role === 'audience')
    .map((c) => reading.text.slice(c.start, c.end))
    .join('\n');
  const said = new Set(words(audience).map(stem));
  const exclusions = uniq([...ref.exclusions, ...answer.exclusions]);
  const negatives = uniq([...(ref.searchNegativeKeywords ?? []), ...(answer.searchNegativeKeywords ?? [])]);
  const ruledOut = (x: string) => {
    const xs = new Set(words(x));
    return [...exclusions, ...negatives].some((e) => words(e).length > 0 && words(e).every((w) => xs.has(w)));
  };
  const named = (name: string) => new RegExp(`(?<![a-z])${esc(name.toLowerCase())}(?![a-z])`).test(audience.toLowerCase());
  const keep = (xs: readonly string[], refs: readonly string[], supported: (x: string) => boolean) =>
    xs.filter((x) => !ruledOut(x) && (refs.some((r) => same(r, x)) || supported(x)));
  const phrase = (x: string) =>
    words(x).filter(CONTENT).length > 0 &&
    words(x)
      .filter(CONTENT)
      .every((w) => said.has(stem(w)));
  const country = (code: string) => COUNTRIES.some((c) => c.code === code && [code, ...c.names].some(named));

  const divisions = new Set(ref.firmographics.sicCodes.map((c) => c.slice(0, 2)));
  const countries = keep(answer.geo.countries, ref.geo.countries, country);
  const gender = ref.demographics.gender !== 'any' || audience.split('\n').every((c) => genderWord(c) !== answer.demographics.gender);
  return {
    ...answer,
    geo: {
      ...answer.geo,
      countries: countries.length ? countries : ref.geo.countries,
      cities: keep(answer.geo.cities, ref.geo.cities, named),
      postcodeDistricts: keep(answer.geo.postcodeDistricts, ref.geo.postcodeDistricts, named),
      tvRegions: keep(answer.geo.tvRegions, ref.geo.tvRegions, named),
    },
    demographics: {
      ...answer.demographics,
      ...ages(answer, ref, audience),
      gender: gender ? ref.demographics.gender : answer.demographics.gender,
    },
    firmographics: { ...answer.firmographics, sicCodes: answer.firmographics.sicCodes.filter((c) => divisions.has(c.slice(0, 2))) },
    interests: keep(answer.interests, ref.interests, phrase),
    intentTopics: keep(answer.intentTopics, ref.intentTopics, phrase),
    exclusions,
    ...(negatives.length ? { searchNegativeKeywords: negatives } : {}),
  };
}

/** An age bound is the rules' unless the answer's lies within their range and is written in the audience clauses. */
function ages(answer: SemanticCore, ref: SemanticCore, audience: string): { ageMin?: number; ageMax?: number } {
  const numbers = new Set((audience.match(/\d+/g) ?? []).map(Number));
  const lo = ref.demographics.ageMin ?? 0;
  const hi = ref.demographics.ageMax ?? Infinity;
  const ok = (n: number | undefined, written: number) => n !== undefined && n >= lo && n <= hi && numbers.has(written);
  const min = ok(answer.demographics.ageMin, answer.demographics.ageMin!) ? answer.demographics.ageMin : ref.demographics.ageMin;
  const max =
    ok(answer.demographics.ageMax, answer.demographics.ageMax!) || ok(answer.demographics.ageMax, answer.demographics.ageMax! + 1);
  const ageMax = max ? answer.demographics.ageMax : ref.demographics.ageMax;
  if (min !== undefined && ageMax !== undefined && min > ageMax) return pick(ref);
  return { ...(min !== undefined ? { ageMin: min } : {}), ...(ageMax !== undefined ? { ageMax } : {}) };
}

function pick(core: SemanticCore): { ageMin?: number; ageMax?: number } {
  const { ageMin, ageMax } = core.demographics;
  return { ...(ageMin !== undefined ? { ageMin } : {}), ...(ageMax !== undefined ? { ageMax } : {}) };
}
