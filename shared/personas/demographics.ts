import { FEMALE_WORDS, HIGH_INCOME, LOW_INCOME, MALE_WORDS, MID_INCOME, MIXED_INCOME } from './lexicon/people';
import { Gender, IncomeBand } from './persona-schema';
import { Brief, alternation } from './text';

export interface GenderResult {
  gender: Gender;
  confidence?: number;
  unresolved: string[];
}

export interface IncomeResult {
  incomeBand: IncomeBand;
  confidence?: number;
  unresolved: string[];
}

const FEMALE = new RegExp(`\\b(${alternation(FEMALE_WORDS)})\\b(?!')`, 'g');
const MALE = new RegExp(`\\b(${alternation(MALE_WORDS)})\\b(?!')`, 'g');
// Non-global copies for a yes/no test (no lastIndex to carry between calls).
const HAS_FEMALE = new RegExp(FEMALE.source);
const HAS_MALE = new RegExp(MALE.source);
// "parents of girls", "gifts for men": the word names someone else.
const OBJECT_BEFORE =
  /\b(?:of|with|whose|their|his|her|gifts?\s+for|presents?\s+for|buying\s+for|shopping\s+for|married\s+to)\s+(?:(?:young|little|teenage|older|adult|new)\s+)?$/;
const ONLY_AFTER = /^\s*(?:-\s*)?(?:only|exclusively)\b/;
const ONLY_BEFORE = /\b(?:only|just|exclusively)\s+$/;

export function genderWord(phrase: string): Gender | null {
  const lower = phrase.toLowerCase();
  const f = HAS_FEMALE.test(lower);
  const m = HAS_MALE.test(lower);
  return f === m ? null : f ? 'female' : 'male';
}

/**
 * Gender from audience words. Both sexes named means "any" ("mums and dads",
 * "women and men alike") unless one of them is restricted with "only", which
 * contradicts the other: reported, left at "any".
 */
export function findGender(b: Brief, excluded: readonly Gender[]): GenderResult {
  const hits: { g: Gender; only: boolean; word: string }[] = [];
  for (const [re, g] of [
    [FEMALE, 'female'],
    [MALE, 'male'],
  ] as const) {
    for (const h of b.find(re)) {
      const before = b.lower.slice(0, h.start);
      if (OBJECT_BEFORE.test(before)) continue;
      const only = ONLY_AFTER.test(b.lower.slice(h.end)) || ONLY_BEFORE.test(before);
      hits.push({ g, only, word: h.text });
      b.claim(h);
    }
  }
  const named = new Set(hits.map((h) => h.g));
  const unresolved: string[] = [];
  if (named.size === 2) {
    const only = hits.find((h) => h.only);
    if (only) {
      unresolved.push(
        `gender: the brief names both ${hits
          .filter((h) => h.g !== only.g)
          .map((h) => `"${h.word}"`)
          .join(', ')} and "${only.word} only"; gender left at any`,
      );
    }
    return { gender: 'any', unresolved };
  }
  const stated = [...named][0];
  if (stated && excluded.includes(stated)) {
    return { gender: 'any', unresolved: [`gender: the brief both targets and excludes ${stated} audiences; gender left at any`] };
  }
  if (stated) return { gender: stated, confidence: 0.9, unresolved };
  if (excluded.length === 1) return { gender: excluded[0] === 'female' ? 'male' : 'female', confidence: 0.8, unresolved };
  return { gender: 'any', unresolved };
}

const band = (words: readonly string[]): RegExp => new RegExp(`(?<![\\w-])(?:${alternation(words)})(?![\\w-])`, 'g');
const HIGH = band(HIGH_INCOME);
const MID = band(MID_INCOME);
const LOW = band(LOW_INCOME);
const MIXED = band(MIXED_INCOME);
const AMOUNT =
  /\b(?:(?:with\s+)?(?:a\s+)?(?:combined|joint|annual|yearly|total)\s+)?(?:earning|earn|earners?|salar(?:y|ies)|incomes?|household income|paid)\b[^.;,]{0,20}?\b(over|above|more than|at least|under|below|less than|between|of)?\s*[£$€]\s?(\d+(?:\.\d+)?)\s*(k|m|,000)?(?:\s*(?:-|to|and)\s*[£$€]?\s?(\d+(?:\.\d+)?)\s*(k|m|,000)?)?(\+)?/g;

function money(n: string, unit: string | undefined): number {
  const v = Number(n);
  return unit === 'k' || unit === ',000' ? v * 1000 : unit === 'm' ? v * 1_000_000 : v;
}

// Thresholds (annual, any of GBP/USD/EUR): a stated floor of 50k or more is
// "high"; a range inside 25k-60k is "mid"; anything else has no band.
function bandForAmount(op: string | undefined, lo: number, hi: number | null, plus: boolean): IncomeBand | null {
  if (hi !== null) return lo >= 50_000 ? 'high' : lo >= 25_000 && hi <= 60_000 ? 'mid' : null;
  if (plus || op === 'over' || op === 'above' || op === 'more than' || op === 'at least') return lo >= 50_000 ? 'high' : null;
  return null;
}

export function findIncome(b: Brief): IncomeResult {
  const unresolved: string[] = [];
  const found = new Set<IncomeBand>();
  let confidence = 0.9;
  for (const h of b.find(MIXED)) {
    unresolved.push(`income "${h.text}" spans two bands; income left at any`);
    b.claim(h);
  }
  for (const [re, value] of [
    [HIGH, 'high'],
    [MID, 'mid'],
  ] as const) {
    for (const h of b.find(re)) {
      found.add(value);
      b.claim(h);
    }
  }
  for (const h of b.find(AMOUNT)) {
    const [op, n1, u1, n2, u2, plus] = h.groups;
    const lo = money(n1!, u1);
    const hi = n2 ? money(n2, u2 ?? u1) : null;
    const got = bandForAmount(op, lo, hi, Boolean(plus));
    if (got) {
      found.add(got);
      confidence = 0.8;
    } else unresolved.push(`income "${h.text.trim()}" does not map onto a band (mid, high)`);
    b.claim(h);
  }
  for (const h of b.find(LOW)) {
    unresolved.push(`income "${h.text}" has no band (bands are mid and high)`);
    b.claim(h);
  }
  if (unresolved.length && found.size === 0) return { incomeBand: 'any', unresolved };
  if (found.size > 1 || (found.size === 1 && unresolved.length)) {
    return { incomeBand: 'any', unresolved: [...unresolved, `income: the brief names more than one income band; income left at any`] };
  }
  const only = [...found][0];
  return only ? { incomeBand: only, confidence, unresolved } : { incomeBand: 'any', unresolved };
}
