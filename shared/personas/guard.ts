import { genderWord } from './demographics';
import { Clause } from './discourse';
import { mentionsPlace } from './geography';
import { COUNTRIES } from './lexicon/countries';
import { TV_REGIONS } from './lexicon/regions';
import { SemanticCore } from './persona-schema';
import { esc, uniq } from './text';

/** The rules' reading of a brief, against which any extractor's answer for it is checked. */
export interface Reading {
  text: string;
  roles: readonly Clause[];
  core: SemanticCore;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const words = (s: string): string[] => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
// Crude stems, enough to see that "hikers" and "hiking" are the brief's word.
const stem = (w: string) => (w.length > 4 ? w.replace(/(?:ing|ers|er|es|s|ed)$/, '') : w);
const CONTENT = (w: string) => w.length > 2 && !['and', 'the', 'for', 'who', 'with', 'into', 'fans', 'people', 'of'].includes(w);

/**
 * The safety post-checks every extractor's answer passes (docs/personas.md, "What a persona must
 * never do"): what the rules or the answer rule out is in no targeting field, what either reports
 * as unresolved stays reported, and a target the rules did not read must be said in a clause about
 * the audience. The rules' own answer passes unchanged.
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
  const unresolved = uniq([...(ref.unresolvedConstraints ?? []), ...(answer.unresolvedConstraints ?? [])]);
  // An interest is ruled out when it holds a ruled-out phrase; a place also when it is part of one ("Ireland" of "Northern Ireland").
  const within = (a: string, b: string) => words(a).length > 0 && words(a).every((w) => words(b).includes(w));
  const ruledOut = (x: string) => [...exclusions, ...negatives].some((e) => within(e, x));
  const placeRuledOut = (x: string) => ruledOut(x) || exclusions.some((e) => within(x, e));
  const named = (name: string) => new RegExp(`(?<![a-z])${esc(name.toLowerCase())}(?![a-z])`).test(audience.toLowerCase());
  const keep = (xs: readonly string[], refs: readonly string[], supported: (x: string) => boolean, out = ruledOut) =>
    uniq(xs.filter((x) => !out(x) && (refs.some((r) => same(r, x)) || supported(x))));
  const place = (xs: readonly string[], refs: readonly string[], known: (x: string) => boolean) =>
    keep(xs, refs, (x) => known(x) && named(x), placeRuledOut);
  const phrase = (x: string) => {
    const content = words(x).filter(CONTENT);
    return content.length > 0 && content.every((w) => said.has(stem(w)));
  };
  const country = (code: string) => COUNTRIES.some((c) => c.code === code && [code, ...c.names].some(named));

  const divisions = new Set(ref.firmographics.sicCodes.map((c) => c.slice(0, 2)));
  const countries = keep(answer.geo.countries, ref.geo.countries, country, placeRuledOut);
  // The rules' gender stands when they read one (they read "no men"), or when no audience clause names the answer's.
  const rulesGender = ref.demographics.gender !== 'any' || audience.split('\n').every((c) => genderWord(c) !== answer.demographics.gender);
  return {
    ...answer,
    geo: {
      ...answer.geo,
      countries: countries.length ? countries : ref.geo.countries,
      cities: place(answer.geo.cities, ref.geo.cities, mentionsPlace),
      postcodeDistricts: place(answer.geo.postcodeDistricts, ref.geo.postcodeDistricts, () => true),
      tvRegions: place(answer.geo.tvRegions, ref.geo.tvRegions, (x) => TV_REGIONS.some((t) => same(t, x))),
    },
    demographics: {
      ...ages(answer, ref, audience),
      ...withoutAges(answer),
      gender: rulesGender ? ref.demographics.gender : answer.demographics.gender,
      incomeBand: answer.demographics.incomeBand,
    },
    firmographics: { ...answer.firmographics, sicCodes: answer.firmographics.sicCodes.filter((c) => divisions.has(c.slice(0, 2))) },
    interests: keep(answer.interests, ref.interests, phrase),
    intentTopics: keep(answer.intentTopics, ref.intentTopics, phrase),
    exclusions,
    ...(negatives.length ? { searchNegativeKeywords: negatives } : {}),
    // An ask the rules report stays reported: someone must review it before buying.
    ...(unresolved.length ? { unresolvedConstraints: unresolved } : {}),
  };
}

/**
 * The rules' age bounds stand (they read the ruled-out bands). A bound they left open may come from
 * the answer when the audience clauses write it and it is not the number a ruled-out band gave.
 */
function ages(answer: SemanticCore, ref: SemanticCore, audience: string): { ageMin?: number; ageMax?: number } {
  const written = new Set((audience.match(/\d+/g) ?? []).map(Number));
  const { ageMin: refMin, ageMax: refMax } = ref.demographics;
  const { ageMin: min, ageMax: max } = answer.demographics;
  const taken = new Set([refMin, refMax].flatMap((n) => (n === undefined ? [] : [n - 1, n, n + 1])));
  const ageMin = refMin ?? (min !== undefined && written.has(min) && !taken.has(min) && min <= (refMax ?? Infinity) ? min : undefined);
  const fits = max !== undefined && (written.has(max) || written.has(max + 1)) && !taken.has(max) && max >= (ageMin ?? 0);
  const ageMax = refMax ?? (fits ? max : undefined);
  return { ...(ageMin !== undefined ? { ageMin } : {}), ...(ageMax !== undefined ? { ageMax } : {}) };
}

/** The answer's demographics but its ages, with any extra detail it carries. */
function withoutAges(core: SemanticCore): Record<string, unknown> {
  const { ageMin: _min, ageMax: _max, ...rest } = core.demographics;
  return rest;
}
