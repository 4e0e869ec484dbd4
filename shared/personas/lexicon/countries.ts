import isoCountries from 'i18n-iso-countries';
import english from 'i18n-iso-countries/langs/en.json';
import { z } from 'zod';
import raw from './countries.json';
import { CountryCode, WordList, parseLexicon } from './load';

// Countries by ISO 3166-1 alpha-2 code: the English names of every ISO
// country (i18n-iso-countries) plus the words briefs use that ISO does not
// (countries.json: "UK", "Britain", "the States", demonyms such as "German" or
// "Brits"). A country we add no words for is read by its ISO names only with a
// place cue, like the names that are also everyday words ("Turkey", "Chad").

const Countries = z.object({
  about: z.string(),
  countries: z.record(
    CountryCode,
    z.object({
      names: z.array(z.string().min(1)),
      adjectives: z.array(z.string().min(1)).optional(),
      plurals: z.array(z.string().min(1)).optional(),
      needsCue: z.boolean().optional(),
    }),
  ),
  groups: z.record(z.string().min(1), z.array(CountryCode).min(1)),
  tooBroad: WordList,
});
const C = parseLexicon('countries.json', Countries, raw);

isoCountries.registerLocale(english);

export interface CountryEntry {
  code: string;
  names: string[];
  adjectives: string[];
  plurals: string[];
  /** The name is also an everyday word or a person's name (Turkey, Jordan): it needs a place cue. */
  needsCue: boolean;
}

// ISO's English names, without the inverted forms ("Korea, Republic of") and
// qualified ones ("Saint Martin (French part)") no brief writes.
function isoNames(code: string): string[] {
  const names = isoCountries.getName(code, 'en', { select: 'all' }) ?? [];
  return names.filter((n) => !/[,()]/.test(n));
}

export const COUNTRIES: readonly CountryEntry[] = Object.keys(isoCountries.getAlpha2Codes()).map((code) => {
  const ours = C.countries[code];
  const names = [...new Set([...(ours?.names ?? []), ...isoNames(code)])];
  return {
    code,
    names,
    adjectives: ours?.adjectives ?? [],
    plurals: ours?.plurals ?? [],
    needsCue: ours ? (ours.needsCue ?? false) : true,
  };
});

/** Named groups of countries a brief may use instead of a list. */
export const COUNTRY_GROUPS: Readonly<Record<string, readonly string[]>> = C.groups;

/** Areas too broad to turn into a country list without guessing; reported, not expanded. */
export const UNLISTABLE_AREAS: readonly string[] = C.tooBroad;

/** Every code our own words name is an ISO 3166-1 country (checked when this loads). */
for (const code of Object.keys(C.countries)) {
  if (!isoCountries.isValid(code)) throw new Error(`lexicon countries.json names ${code}, which is not an ISO 3166-1 alpha-2 code`);
}
