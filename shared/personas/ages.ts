import { GENERATIONS, UNBUYABLE_GENERATIONS } from './lexicon/people';
import { AGE_CEILING, AGE_FLOOR } from './persona-schema';
import { Brief, Hit } from './text';

// Age bands as people write them. A "closed" band has both ends (25-34, a
// decade, a generation); an open one has one (over 55, under 30). Closed
// bands in one brief are alternatives and merge when they touch; open ones
// are constraints and intersect. Whatever cannot be held in one [min, max]
// range is reported and the ages are left unset rather than guessed.

export interface AgeBand {
  min?: number;
  max?: number;
  closed: boolean;
  source: string;
  confidence: number;
  /** Teens and generations are conventions, not numbers the brief wrote. */
  conventional?: boolean;
}

export interface AgeFindings {
  bands: AgeBand[];
  problems: string[];
}

export interface AgeResult {
  ageMin?: number;
  ageMax?: number;
  confidence?: number;
  unresolved: string[];
}

// Ages in words ("sixty and over", "between eighteen and twenty-two").
const UNITS = ['', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const TEEN_WORDS: Record<string, number> = {
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const WORD_NUMBER = `(?:(?:${Object.keys(TENS).join('|')})(?:[- ](?:${UNITS.slice(1).join('|')}))?|${Object.keys(TEEN_WORDS).join('|')})(?![\\w-])`;
/** "65" or "sixty-five" -> 65; anything else NaN. */
export function ageNumber(s: string | undefined): number {
  if (s === undefined) return NaN;
  if (/^\d+$/.test(s)) return Number(s);
  const [tens, unit] = s.toLowerCase().split(/[- ]/);
  if (TEEN_WORDS[tens!] !== undefined) return TEEN_WORDS[tens!]!;
  if (TENS[tens!] === undefined) return NaN;
  return TENS[tens!]! + (unit ? UNITS.indexOf(unit) : 0);
}
const N = `(\\d{1,3}|${WORD_NUMBER})(?!\\d)(?![,.]\\d)`;
const SUFFIX = "(s\\b|'s\\b|\\s*(?:-|\\s)?(?:year|yr)s?[- ]?olds?\\b|\\s*years?(?: of age|[- ]old)\\b|\\s*yo\\b)?";
const CUE = '(aged|age|ages|age group|age range|between the ages of|ages of|between)?';
const UNIT_AFTER =
  /^\s*(?:%|per ?cent|k\b|m\b|bn\b|employees?|staff|people|members|days?|weeks?|months?|hours?|h\b|minutes?|mins?|miles?|mph|km|kg|stores?|sites?|locations?|branches|beds|rooms|seats|users|followers|orders|times|visits|pounds|points|holes|countries|cities|markets|years?(?![- ]old| of age)|yrs?(?![- ]?old))/;
const BLOCK_BEFORE =
  /(?:[£$€#]|\b(?:ftse|fortune|top|score|series|global|spend|spending|budget|salary|salaries|earning|earnings|income|revenue|turnover|rated|rating|size|sized|employees|staff|last|past|next|within|every)\s*)$/;
// "parents of kids aged 5-11": the ages describe the children, not the audience.
const CHILD_BEFORE =
  /\b(?:of|with|their|have|has|having|whose|for)\s+(?:(?:young|little|school-age|primary school|secondary school)\s+)?(?:children|child|kids|sons|daughters|babies|toddlers|pupils|grandchildren|grandkids)\b[^,.;]{0,12}$/;

const RANGE = new RegExp(`\\b${CUE}\\s*${N}\\s*(?:-|to|and|until)\\s*${N}${SUFFIX}`, 'g');
const OVER = new RegExp(`\\b(aged\\s+)?(?:over|above|older than|at least|minimum(?: age)?(?: of)?)[- ]?${N}${SUFFIX}`, 'g');
const PLUS = new RegExp(`\\b(aged\\s+|ages\\s+)?${N}\\s*\\+${SUFFIX}`, 'g');
const AND_OVER = new RegExp(`\\b(aged\\s+)?${N}${SUFFIX}\\s+(?:and|or)\\s+(?:over|above|older|up|upwards|plus)\\b(?![- ]?\\d)`, 'g');
const UNDER = new RegExp(`\\b(aged\\s+)?(?:under|below|younger than|less than)[- ]?${N}${SUFFIX}`, 'g');
const UP_TO = new RegExp(`\\b(aged\\s+)?(?:up to)\\s+${N}${SUFFIX}`, 'g');
const AND_UNDER = new RegExp(`\\b(aged\\s+)?${N}${SUFFIX}\\s+(?:and|or)\\s+(?:under|younger|below)\\b(?![- ]?\\d)`, 'g');
const DECADE_WORDS: Record<string, number> = {
  twenties: 20,
  thirties: 30,
  forties: 40,
  fifties: 50,
  sixties: 60,
  seventies: 70,
  eighties: 80,
  nineties: 90,
};
const DECADE = '(?:(early|mid|late)[- ]?)?(\\d0s|twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)';
const DECADES = new RegExp(`\\b(?:in|into)\\s+(?:their|his|her|your)\\s+${DECADE}(?:\\s*(?:and|or|to|-)\\s*${DECADE})?`, 'g');
const SOMETHINGS = /\b(\d0|twenty|thirty|forty|fifty|sixty)[- ]?somethings?\b/g;
const SOMETHING_WORDS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60 };
const TEENS = /\b(?:teens|teenagers?|teenage|teenaged)\b/g;
const GEN_RE = GENERATIONS.map((g) => ({ g, re: new RegExp(`\\b(?:${g.pattern})\\b`, 'g') }));
const UNBUYABLE = new RegExp(`\\b(?:${UNBUYABLE_GENERATIONS})\\b`, 'g');

function decadeStart(word: string): number {
  return DECADE_WORDS[word] ?? Number(word.slice(0, 2));
}
function decadeBand(part: string | undefined, word: string): [number, number] {
  const d = decadeStart(word);
  if (part === 'early') return [d, d + 3];
  if (part === 'mid') return [d + 4, d + 6];
  if (part === 'late') return [d + 7, d + 9];
  return [d, d + 9];
}

// Ages written as who to leave out: "leave out anyone under 25", "nobody
// under 21 or over 65", "not older than 40", "no one younger than 30",
// "gamers under eighteen are out". Excluding under N keeps N and above;
// excluding over/older than N keeps up to N.
const LEAVE_OUT = `(?:leave out|leaving out|no(?:body| one|-one)|not|never|none)\\s+(?:anyone\\s+|anybody\\s+|people\\s+|those\\s+|aged\\s+)*`;
const BOUND = `(under|below|younger than|over|above|older than)[- ]?${N}`;
const EXCLUDED_AGE = new RegExp(`\\b${LEAVE_OUT}${BOUND}(?:\\s+or\\s+${BOUND})?`, 'g');
const ARE_OUT = new RegExp(`\\b(?:[a-z]+\\s+)?(under|below|over|above)[- ]?${N}s?\\s+(?:are|is)\\s+(?:out|excluded)\\b`, 'g');

function keptBand(dir: string, n: number, source: string): AgeBand {
  return /under|below|younger/.test(dir)
    ? { min: n, closed: false, source, confidence: 0.9 }
    : { max: n, closed: false, source, confidence: 0.9 };
}

/** Find and claim ages phrased as exclusions; they are kept bounds, read before other exclusions. */
export function findExcludedAges(b: Brief): AgeBand[] {
  const bands: AgeBand[] = [];
  for (const h of [...b.find(EXCLUDED_AGE), ...b.find(ARE_OUT)]) {
    if (!b.isFree(h)) continue;
    const g = h.groups;
    for (let i = 0; i + 1 < g.length; i += 2) {
      if (g[i] === undefined) continue;
      const n = ageNumber(g[i + 1]);
      if (!Number.isNaN(n) && n <= 120) bands.push(keptBand(g[i]!, n, h.text.trim()));
    }
    b.claim(h);
  }
  return bands;
}

/** Find and claim every age band in the brief. */
export function findAges(b: Brief): AgeFindings {
  const bands: AgeBand[] = [];
  const problems: string[] = [];
  const accept = (h: Hit, needsCheck: boolean, cued: boolean): boolean => {
    const before = b.lower.slice(0, h.start);
    const after = b.lower.slice(h.end);
    if (CHILD_BEFORE.test(before)) return false;
    if (needsCheck && !cued && (UNIT_AFTER.test(after) || BLOCK_BEFORE.test(before))) return false;
    if (/[£$€#]\s*$/.test(before)) return false;
    return b.isFree(h);
  };
  const push = (h: Hit, band: AgeBand): void => {
    bands.push(band);
    b.claim(h);
  };

  for (const h of b.find(RANGE)) {
    const [cue, a, c, suffix] = h.groups;
    const lo = ageNumber(a);
    const hi = ageNumber(c);
    const cued = Boolean(cue && cue !== 'between') || Boolean(suffix);
    if (/\band\b/.test(h.text) && !/between/.test(b.lower.slice(Math.max(0, h.start - 25), h.end))) continue;
    if (!accept(h, true, cued)) continue;
    if (!cued && (lo < 13 || hi > 99 || lo >= hi)) continue;
    if (lo > hi) {
      problems.push(`age range "${h.text.trim()}" runs backwards; age left unset`);
      b.claim(h);
      continue;
    }
    push(h, { min: lo, max: hi, closed: true, source: h.text.trim(), confidence: 0.95 });
  }
  const open = (re: RegExp, kind: 'min' | 'max', offset: number): void => {
    for (const h of b.find(re)) {
      const num = ageNumber(h.groups.find((g) => g !== undefined && !Number.isNaN(ageNumber(g))));
      const cued = Boolean(h.groups[0]) || Boolean(h.groups[2]);
      if (!accept(h, true, cued) || num > 120) continue;
      if (!cued && (num < 13 || num > 99)) continue;
      push(h, { [kind]: num + offset, closed: false, source: h.text.trim(), confidence: 0.95 });
    }
  };
  open(AND_OVER, 'min', 0);
  open(AND_UNDER, 'max', 0);
  open(OVER, 'min', 0);
  open(PLUS, 'min', 0);
  open(UNDER, 'max', -1);
  open(UP_TO, 'max', 0);

  for (const h of b.find(DECADES)) {
    const [p1, w1, p2, w2] = h.groups;
    const first = decadeBand(p1, w1!);
    const last = w2 ? decadeBand(p2, w2) : first;
    push(h, { min: first[0], max: last[1], closed: true, source: h.text.trim(), confidence: 0.9 });
  }
  for (const h of b.find(SOMETHINGS)) {
    const w = h.groups[0]!;
    const d = /^\d/.test(w) ? Number(w) : SOMETHING_WORDS[w]!;
    push(h, { min: d, max: d + 9, closed: true, source: h.text.trim(), confidence: 0.85 });
  }
  for (const h of b.find(TEENS)) {
    const before = b.lower.slice(0, h.start);
    const after = b.lower.slice(h.end);
    // "parents of teens" describes the children, not the audience.
    if (/\b(?:of|with|their|her|his|for)\s+(?:young\s+|older\s+)?$/.test(before)) continue;
    if (/^\s*(?:children|kids|sons|daughters|pupils)\b/.test(after)) continue;
    push(h, { min: AGE_FLOOR, max: 19, closed: true, source: h.text.trim(), confidence: 0.75, conventional: true });
  }
  for (const { g, re } of GEN_RE) {
    for (const h of b.find(re)) {
      push(h, { min: g.ageMin, max: g.ageMax, closed: true, source: h.text.trim(), confidence: 0.7, conventional: true });
    }
  }
  for (const h of b.find(UNBUYABLE)) {
    problems.push(`"${h.text.trim()}" is below the minimum targetable age of ${AGE_FLOOR}`);
    b.claim(h);
  }
  return { bands, problems };
}

/** Age band named inside an exclusion ("but not under-25s"). */
export function excludedAgeBand(phrase: string): AgeBand | null {
  const found = findAges(new Brief(phrase));
  return found.bands.length === 1 ? found.bands[0]! : null;
}

const fmt = (b: AgeBand): string => `"${b.source}"`;

export function combineAges(includes: readonly AgeBand[], excludes: readonly AgeBand[], problems: readonly string[]): AgeResult {
  const unresolved = [...problems];
  const fail = (why: string): AgeResult => ({ unresolved: [...unresolved, why] });
  if (problems.some((p) => /runs backwards/.test(p))) return { unresolved };

  let lo = -Infinity;
  let hi = Infinity;
  // Numbers the brief wrote beat a convention ("millennials aged 28-35" is
  // 28-35), unless the two do not even overlap.
  const numeric = includes.filter((b) => b.closed && !b.conventional);
  const conventional = includes.filter((b) => b.closed && b.conventional);
  if (numeric.length && conventional.length) {
    const clash = conventional.find((c) => numeric.every((n) => n.max! < c.min! || n.min! > c.max!));
    if (clash) return fail(`age ${fmt(clash)} and ${numeric.map(fmt).join(', ')} do not overlap; age left unset`);
  }
  const closed = (numeric.length ? numeric : conventional).sort((x, y) => x.min! - y.min!);
  if (closed.length) {
    const cLo = closed[0]!.min!;
    let cHi = closed[0]!.max!;
    for (const band of closed.slice(1)) {
      if (band.min! > cHi + 1) return fail(`age ranges ${closed.map(fmt).join(' and ')} do not form one range; age left unset`);
      cHi = Math.max(cHi, band.max!);
    }
    [lo, hi] = [cLo, cHi];
  }
  for (const band of includes.filter((b) => !b.closed)) {
    if (band.min !== undefined) lo = Math.max(lo, band.min);
    if (band.max !== undefined) hi = Math.min(hi, band.max);
  }
  for (const ex of excludes) {
    const eLo = ex.min ?? -Infinity;
    const eHi = ex.max ?? Infinity;
    if (eLo <= lo) lo = Math.max(lo, eHi + 1);
    else if (eHi >= hi) hi = Math.min(hi, eLo - 1);
    else return fail(`excluded age band ${fmt(ex)} would leave a gap inside the range; age left unset`);
  }
  if (lo > hi) return fail(`age constraints ${[...includes, ...excludes].map(fmt).join(', ')} cannot all hold; age left unset`);
  if (hi < AGE_FLOOR) return fail(`ages below ${AGE_FLOOR} cannot be targeted; age left unset`);
  if (lo !== -Infinity && lo < AGE_FLOOR) {
    const written = includes.some((b) => !b.conventional && b.min !== undefined && b.min < AGE_FLOOR);
    if (written) unresolved.push(`ages below ${AGE_FLOOR} cannot be targeted; ageMin raised to ${AGE_FLOOR}`);
    lo = AGE_FLOOR;
  }
  if (lo > AGE_CEILING) return fail(`minimum age ${lo} is above ${AGE_CEILING}; age left unset`);
  const used = [...includes, ...excludes];
  const confidence = used.length ? Math.min(...used.map((b) => b.confidence)) : undefined;
  return {
    ...(lo !== -Infinity ? { ageMin: lo } : {}),
    ...(hi !== Infinity && hi <= AGE_CEILING ? { ageMax: hi } : {}),
    ...(confidence !== undefined ? { confidence } : {}),
    unresolved,
  };
}
