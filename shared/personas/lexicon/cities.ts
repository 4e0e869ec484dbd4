import { z } from 'zod';
import raw from './cities.json';
import geonames from './geonames-cities.json';
import { CountryCode, WordList, parseLexicon } from './load';

// Cities by English name: ours (cities.json: the names a persona reports,
// aliases, names that are also everyday words) first, then GeoNames
// (geonames-cities.json, a filtered snapshot; see
// test/personas/geonames-snapshot.ts). A GeoNames-only city counts only
// written with a capital and with a place cue ("in Aachen", "Aachen-based"),
// since thousands of names include words and first names. A name listed under
// two countries is resolved by the country the brief names, else the first.

const Cities = z.object({
  about: z.string(),
  cities: z.array(
    z.object({
      name: z.string().min(1),
      country: CountryCode,
      aliases: z.array(z.string().min(1)).optional(),
      needsCue: z.boolean().optional(),
    }),
  ),
  notCities: WordList,
});
const Geonames = z.object({
  source: z.string(),
  licence: z.string(),
  filter: z.unknown(),
  cities: z.array(z.tuple([z.string().min(1), CountryCode, z.number().int().nonnegative()])),
});
const OURS = parseLexicon('cities.json', Cities, raw);
const GEONAMES = parseLexicon('geonames-cities.json', Geonames, geonames);

export interface CityEntry {
  name: string;
  aliases: string[];
  country: string;
  /** The name is also a common word or first name (Reading, Bath): capitalised and with a place cue only. */
  needsCue: boolean;
  /** From GeoNames, not named by us: read only as written, capitalised, with a cue. */
  geonames?: boolean;
}

export const CITIES: readonly CityEntry[] = OURS.cities.map((c) => ({
  name: c.name,
  aliases: c.aliases ?? [],
  country: c.country,
  needsCue: c.needsCue ?? false,
}));

const key = (name: string): string => name.toLowerCase().replace(/[\s-]+/g, ' ');
const NAMED = new Set([...CITIES.flatMap((c) => [c.name, ...c.aliases]).map(key), ...OURS.notCities]);

/** GeoNames cities we do not name ourselves, biggest first, by lower-case name. */
export const GEONAMES_CITIES: ReadonlyMap<string, readonly CityEntry[]> = (() => {
  const index = new Map<string, CityEntry[]>();
  const sorted = [...GEONAMES.cities].sort((a, b) => b[2] - a[2]);
  for (const [name, country] of sorted) {
    const k = key(name);
    if (NAMED.has(k)) continue;
    index.set(k, [...(index.get(k) ?? []), { name, aliases: [], country, needsCue: true, geonames: true }]);
  }
  return index;
})();

/** Longest GeoNames name in words, so a scan knows how far to look. */
export const GEONAMES_LONGEST_WORDS = Math.max(...[...GEONAMES_CITIES.keys()].map((k) => k.split(' ').length));

export interface CityMention {
  start: number;
  end: number;
  /** Every GeoNames city of that name, biggest first. */
  cities: readonly CityEntry[];
}

// Words as written: letters and digits, apostrophes, and hyphens inside a
// name ("Stoke-on-Trent") but not before "-based" or "-wide".
const WORD = /[\p{L}\d][\p{L}\d']*(?:-(?!based\b|wide\b)[\p{L}\d']+)*/uy;
const CAPITALISED = /(?<![\p{L}\d'-])\p{Lu}[\p{L}\d']*(?:-(?!based\b|wide\b)[\p{L}\d']+)*/gu;
const FIRST_WORDS: ReadonlySet<string> = new Set([...GEONAMES_CITIES.keys()].map((k) => k.split(' ')[0]!));

/** The words from `at` on, while single spaces join them, up to `max` words. */
function wordsFrom(text: string, at: number, max: number): { start: number; end: number; value: string }[] {
  const out: { start: number; end: number; value: string }[] = [];
  let i = at;
  while (out.length < max) {
    WORD.lastIndex = i;
    const m = WORD.exec(text);
    if (!m) break;
    out.push({ start: i, end: i + m[0].length, value: m[0] });
    i += m[0].length;
    if (text[i] !== ' ') break;
    i++;
  }
  return out;
}

/** GeoNames cities named in text (claimed characters masked), longest name first at each capitalised word. */
export function findGeonamesCities(text: string): CityMention[] {
  const out: CityMention[] = [];
  let reach = 0;
  for (const m of text.matchAll(CAPITALISED)) {
    if (m.index < reach || !FIRST_WORDS.has(key(m[0]).split(' ')[0]!)) continue;
    const words = wordsFrom(text, m.index, GEONAMES_LONGEST_WORDS);
    for (let n = words.length; n >= 1; n--) {
      const cities = GEONAMES_CITIES.get(
        key(
          words
            .slice(0, n)
            .map((w) => w.value)
            .join(' '),
        ),
      );
      if (!cities) continue;
      out.push({ start: words[0]!.start, end: words[n - 1]!.end, cities });
      reach = words[n - 1]!.end;
      break;
    }
  }
  return out;
}
