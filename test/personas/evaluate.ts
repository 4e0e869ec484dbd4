import { ExtractedPersona, PersonaExtractor } from '../../shared/personas/extractor';

// Scores an extractor against labelled briefs (shared/personas/README.md).
// Only keys present in a case's `expect` are judged.
//
// A key is "right" on a brief as the README's table says (set equality,
// equality, "every code's division is allowed", "each word appears"...).
// Precision and recall, per key, aggregated over the briefs labelled with it:
// - set keys (countries, cities, postcodeDistricts, tvRegions, seniority,
//   negativeKeywords): per item, micro-averaged. precision = items both
//   extracted and labelled / items extracted; recall = / items labelled.
// - scalar keys (ageMin, ageMax, gender, incomeBand, companySize):
//   precision = briefs right where the extractor set a non-default value /
//   briefs where it set one; recall = briefs right / briefs labelled.
// - sicDivisions: precision = codes whose division is allowed / codes
//   extracted; recall = briefs with at least one allowed code / briefs labelled.
// - exclusionsInclude, interestsInclude: recall = labelled words found /
//   labelled words; precision = briefs with every word found / briefs where the
//   extractor filled the field (extra entries are not wrong: labels name only
//   the key words).
// - hasUnresolved: a yes/no classifier; precision = briefs rightly flagged /
//   briefs flagged, recall = briefs rightly flagged / briefs labelled true.
// - sicDivisions: [] means the brief names no industry: right when no code.
// Keys beyond the README's table, for what a brief must not produce:
// - notTargeted: each word (case-insensitive) is in no positive field
//   (interests, intent topics, industries, cities, regions, TV regions);
//   recall = words kept out / words labelled.
// - unresolvedInclude: each word is in some unresolved constraint.
// - notUnresolved: no unresolved constraint holds the word (tone, product
//   and asks a field holds are not constraints).
// A set key labelled [] ("must produce nothing") is right only when the
// field is absent or empty: an absent field counts as the empty set.
// A ratio with a zero denominator is null (shown as "-").

export interface Expectation {
  countries?: string[];
  cities?: string[];
  postcodeDistricts?: string[];
  tvRegions?: string[];
  ageMin?: number | null;
  ageMax?: number | null;
  gender?: string;
  incomeBand?: string;
  seniority?: string[];
  companySize?: string;
  sicDivisions?: string[];
  exclusionsInclude?: string[];
  negativeKeywords?: string[];
  interestsInclude?: string[];
  hasUnresolved?: boolean;
  notTargeted?: string[];
  unresolvedInclude?: string[];
  notUnresolved?: string[];
}

export interface LabelledCase {
  id: string;
  brief: string;
  expect: Expectation;
}

export const SCORED_KEYS = [
  'countries',
  'cities',
  'postcodeDistricts',
  'tvRegions',
  'ageMin',
  'ageMax',
  'gender',
  'incomeBand',
  'seniority',
  'companySize',
  'sicDivisions',
  'exclusionsInclude',
  'negativeKeywords',
  'interestsInclude',
  'hasUnresolved',
  'notTargeted',
  'unresolvedInclude',
  'notUnresolved',
] as const;
export type ScoredKey = (typeof SCORED_KEYS)[number];

export interface FieldScore {
  labelled: number;
  right: number;
  accuracy: number | null;
  precision: number | null;
  recall: number | null;
}

export interface Miss {
  id: string;
  key: ScoredKey;
  expected: unknown;
  got: unknown;
}

export interface EvaluationResult {
  cases: number;
  allRight: number;
  allRightShare: number | null;
  fields: Partial<Record<ScoredKey, FieldScore>>;
  misses: Miss[];
}

interface Tally {
  labelled: number;
  right: number;
  pNum: number;
  pDen: number;
  rNum: number;
  rDen: number;
}

const ratio = (n: number, d: number): number | null => (d === 0 ? null : n / d);
const setEq = (a: readonly string[], b: readonly string[]): boolean => {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
};
const up = (xs: readonly string[]): string[] => xs.map((x) => x.toUpperCase());
const low = (xs: readonly string[]): string[] => xs.map((x) => x.toLowerCase());

/** What the persona holds for a key, in the form the key is compared in. */
function actual(p: ExtractedPersona, key: ScoredKey): unknown {
  const sc = p.semanticCore;
  switch (key) {
    case 'countries':
      return up(sc.geo.countries.map((c) => (c.toUpperCase() === 'UK' ? 'GB' : c)));
    case 'cities':
      return sc.geo.cities ?? [];
    case 'postcodeDistricts':
      return up(sc.geo.postcodeDistricts ?? []);
    case 'tvRegions':
      return sc.geo.tvRegions ?? [];
    case 'ageMin':
      return sc.demographics.ageMin ?? null;
    case 'ageMax':
      return sc.demographics.ageMax ?? null;
    case 'gender':
      return sc.demographics.gender;
    case 'incomeBand':
      return sc.demographics.incomeBand;
    case 'seniority':
      return sc.firmographics.seniority ?? [];
    case 'companySize':
      return sc.firmographics.companySize;
    case 'sicDivisions':
      return sc.firmographics.sicCodes ?? [];
    case 'exclusionsInclude':
      return sc.exclusions;
    case 'negativeKeywords':
      return low(sc.searchNegativeKeywords ?? []);
    case 'interestsInclude':
      return [...sc.interests, ...sc.intentTopics];
    case 'hasUnresolved':
      return (sc.unresolvedConstraints ?? []).length > 0;
    case 'notTargeted':
      return positiveEntries(sc);
    case 'unresolvedInclude':
    case 'notUnresolved':
      return sc.unresolvedConstraints ?? [];
  }
}

const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((v): v is string => typeof v === 'string') : []);

/** Every entry of a field that targets someone: what an exclusion must never reach. */
export function positiveEntries(sc: ExtractedPersona['semanticCore']): string[] {
  return [
    ...sc.interests,
    ...sc.intentTopics,
    ...strings(sc.firmographics['industries']),
    ...sc.geo.cities,
    ...strings(sc.geo['regions']),
    ...sc.geo.tvRegions,
  ];
}

const SCALAR_DEFAULTS: Partial<Record<ScoredKey, unknown>> = {
  ageMin: null,
  ageMax: null,
  gender: 'any',
  incomeBand: 'any',
  companySize: 'any',
};

/** Score one key on one brief: whether it is right, and its precision/recall counts. */
function scoreKey(key: ScoredKey, expected: unknown, got: unknown): Omit<Tally, 'labelled'> {
  const contains = (entries: string[], word: string): boolean => entries.some((e) => e.toLowerCase().includes(word.toLowerCase()));
  switch (key) {
    case 'countries':
    case 'cities':
    case 'postcodeDistricts':
    case 'tvRegions':
    case 'seniority':
    case 'negativeKeywords': {
      const norm = key === 'countries' || key === 'postcodeDistricts' ? up : key === 'negativeKeywords' ? low : (x: string[]) => x;
      const exp = norm(expected as string[]);
      const act = got as string[];
      const tp = act.filter((x) => exp.includes(x)).length;
      return { right: setEq(exp, act) ? 1 : 0, pNum: tp, pDen: act.length, rNum: tp, rDen: exp.length };
    }
    case 'sicDivisions': {
      const allowed = expected as string[];
      const codes = got as string[];
      if (!allowed.length) return { right: codes.length ? 0 : 1, pNum: 0, pDen: codes.length, rNum: 0, rDen: 0 };
      const ok = codes.filter((c) => allowed.includes(c.slice(0, 2))).length;
      const right = codes.length > 0 && ok === codes.length ? 1 : 0;
      return { right, pNum: ok, pDen: codes.length, rNum: ok > 0 ? 1 : 0, rDen: 1 };
    }
    case 'exclusionsInclude':
    case 'interestsInclude':
    case 'unresolvedInclude': {
      const words = expected as string[];
      const entries = got as string[];
      const found = words.filter((w) => contains(entries, w)).length;
      const right = found === words.length ? 1 : 0;
      return { right, pNum: entries.length && right ? 1 : 0, pDen: entries.length ? 1 : 0, rNum: found, rDen: words.length };
    }
    case 'notTargeted':
    case 'notUnresolved': {
      const words = expected as string[];
      const entries = got as string[];
      const kept = words.filter((w) => !contains(entries, w)).length;
      return { right: kept === words.length ? 1 : 0, pNum: kept, pDen: words.length, rNum: kept, rDen: words.length };
    }
    case 'hasUnresolved': {
      const right = expected === got ? 1 : 0;
      return {
        right,
        pNum: got === true && expected === true ? 1 : 0,
        pDen: got === true ? 1 : 0,
        rNum: got === true && expected === true ? 1 : 0,
        rDen: expected === true ? 1 : 0,
      };
    }
    default: {
      const right = expected === got ? 1 : 0;
      const setByExtractor = got !== SCALAR_DEFAULTS[key];
      return { right, pNum: setByExtractor && right ? 1 : 0, pDen: setByExtractor ? 1 : 0, rNum: right, rDen: 1 };
    }
  }
}

export function evaluate(extractor: PersonaExtractor, cases: readonly LabelledCase[]): EvaluationResult {
  const tallies = new Map<ScoredKey, Tally>();
  const misses: Miss[] = [];
  let allRight = 0;
  for (const c of cases) {
    const persona = extractor.extract(c.brief);
    let everyKey = true;
    for (const key of SCORED_KEYS) {
      if (!(key in c.expect)) continue;
      const expected = c.expect[key];
      const got = actual(persona, key);
      const s = scoreKey(key, expected, got);
      const t = tallies.get(key) ?? { labelled: 0, right: 0, pNum: 0, pDen: 0, rNum: 0, rDen: 0 };
      tallies.set(key, {
        labelled: t.labelled + 1,
        right: t.right + s.right,
        pNum: t.pNum + s.pNum,
        pDen: t.pDen + s.pDen,
        rNum: t.rNum + s.rNum,
        rDen: t.rDen + s.rDen,
      });
      if (!s.right) {
        everyKey = false;
        misses.push({ id: c.id, key, expected, got });
      }
    }
    if (everyKey) allRight++;
  }
  const fields: Partial<Record<ScoredKey, FieldScore>> = {};
  for (const key of SCORED_KEYS) {
    const t = tallies.get(key);
    if (!t) continue;
    fields[key] = {
      labelled: t.labelled,
      right: t.right,
      accuracy: ratio(t.right, t.labelled),
      precision: ratio(t.pNum, t.pDen),
      recall: ratio(t.rNum, t.rDen),
    };
  }
  return { cases: cases.length, allRight, allRightShare: ratio(allRight, cases.length), fields, misses };
}

const pct = (x: number | null): string => (x === null ? '-' : x.toFixed(2));

/** Fixed-width text table: one row per scored key, then the all-fields-right share. */
export function formatTable(result: EvaluationResult, title = 'persona extraction'): string {
  const rows = [
    `${title} (${result.cases} briefs)`,
    `${'field'.padEnd(18)}${'n'.padStart(5)}${'right'.padStart(7)}${'acc'.padStart(7)}${'prec'.padStart(7)}${'recall'.padStart(8)}`,
    '-'.repeat(52),
  ];
  for (const key of SCORED_KEYS) {
    const f = result.fields[key];
    if (!f) continue;
    rows.push(
      `${key.padEnd(18)}${String(f.labelled).padStart(5)}${String(f.right).padStart(7)}${pct(f.accuracy).padStart(7)}${pct(f.precision).padStart(7)}${pct(f.recall).padStart(8)}`,
    );
  }
  rows.push('-'.repeat(52));
  rows.push(
    `${'all fields right'.padEnd(18)}${String(result.cases).padStart(5)}${String(result.allRight).padStart(7)}${pct(result.allRightShare).padStart(7)}`,
  );
  return rows.join('\n');
}
