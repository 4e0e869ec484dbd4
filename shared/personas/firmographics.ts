import { COMPANY_NOUNS, CONSUMER_AFTER, INDUSTRIES } from './lexicon/industries';
import { EMPLOYEE_WORDS, FUNCTION_WORDS, SENIOR_QUALIFIERS, SENIORITY_PATTERNS, SIZE_PATTERNS, sizeForEmployees } from './lexicon/roles';
import { CompanySize, SENIORITIES, Seniority } from './persona-schema';
import { Brief, Hit, Span, alternation, uniq } from './text';

export interface FirmographicsResult {
  sicCodes: string[];
  industries: string[];
  seniority: Seniority[];
  companySize: CompanySize;
  unresolved: string[];
  confidence: Record<string, number>;
}

const word = (alts: string): RegExp => new RegExp(`(?<![\\w-])(?:${alts})(?![\\w-])`, 'g');
const COMPANY = `(?:${alternation(COMPANY_NOUNS)})`;
interface Industry {
  label: string;
  codes: readonly string[];
}
const ORG_INDEX = new Map<string, Industry[]>();
const TERM_INDEX = new Map<string, Industry[]>();
for (const e of INDUSTRIES) {
  for (const org of e.orgs) {
    const [name, codes] = typeof org === 'string' ? [org, e.codes] : org;
    ORG_INDEX.set(name, [...(ORG_INDEX.get(name) ?? []), { label: e.label, codes }]);
  }
  for (const t of e.terms) TERM_INDEX.set(t, [...(TERM_INDEX.get(t) ?? []), { label: e.label, codes: e.codes }]);
}
const ORG_RE = word(alternation([...ORG_INDEX.keys()]));
const TERM_ALT = alternation([...TERM_INDEX.keys()]);
const TERM_RE = word(TERM_ALT);
// "food and drink manufacturers": a sector word before an organisation noun
// narrows it; the organisation alone ("manufacturers") would be all of manufacturing.
const TERM_BEFORE = new RegExp(`(?<![\\w-])(?:${TERM_ALT})\\s+$`);
const CHAIN_RE = word(`(?:${TERM_ALT})(?:\\s*(?:,|and|&|or|/)\\s*(?:the\\s+)?(?:${TERM_ALT}))*`);
const COMPANY_AFTER = new RegExp(`^\\s+(?:(?!and\\b|or\\b|at\\b|in\\b|of\\b|for\\b|who\\b)[a-z-]+\\s+)?${COMPANY}(?![\\w-])`);
const SECTOR_BEFORE = /\b(?:in|across|within|throughout|into|inside)\s+(?:the\s+)?(?:uk\s+|british\s+|global\s+|wider\s+|wider\s+uk\s+)?$/;
const CONSUMER = new RegExp(`^\\s+(?:${alternation(CONSUMER_AFTER)})\\b`);
const CONSUMER_SUBJECT = new RegExp(`\\b(?:${alternation(CONSUMER_AFTER)})\\s+(?:at|of|in|from)\\b`);
const ORG_CONTEXT = /\b(?:at|in|for|within|across|among|of|from|inside|serving)\b/;
const B2B_WORDS =
  /\b(?:b2b|companies|businesses|firms|organi[sz]ations|decision[- ]makers|procurement|professionals|employees|practitioners|owners of|smes?|smbs?)\b/;

const SENIORITY_RES = SENIORITY_PATTERNS.map((p) => ({ level: p.level, re: word(p.pattern) }));
const SIZE_RES = SIZE_PATTERNS.map((p) => ({ size: p.size, re: word(p.pattern) }));
const B2B_TITLE = new RegExp(
  SENIORITY_PATTERNS.filter((p) => p.level !== 'ic')
    .map((p) => `(?<![\\w-])(?:${p.pattern})(?![\\w-])`)
    .join('|'),
);
const B2B_SIZE = new RegExp(SIZE_PATTERNS.map((p) => `(?<![\\w-])(?:${p.pattern})(?![\\w-])`).join('|'));

/** Titles, company sizes or business words: the brief describes a business audience. */
export function hasB2bSignal(hay: string): boolean {
  return B2B_WORDS.test(hay) || B2B_TITLE.test(hay) || B2B_SIZE.test(hay);
}

function normKey(s: string): string {
  return s.replace(/-/g, ' ').replace(/\s+/g, ' ');
}

function lookup(index: Map<string, Industry[]>, phrase: string): Industry[] {
  return index.get(phrase) ?? index.get(normKey(phrase)) ?? [...index.entries()].find(([k]) => normKey(k) === normKey(phrase))?.[1] ?? [];
}

function findIndustries(b: Brief, hay: string, b2b: boolean): { entries: Industry[]; spans: Span[] } {
  const found: { at: number; e: Industry }[] = [];
  const spans: Span[] = [];
  for (const h of b.findOn(hay, ORG_RE)) {
    const after = hay.slice(h.end);
    if (CONSUMER.test(after)) continue;
    if (TERM_BEFORE.test(hay.slice(Math.max(0, h.start - 40), h.start)) && COMPANY_AFTER.test(` ${hay.slice(h.start)}`)) continue;
    const clause =
      hay
        .slice(0, h.start)
        .split(/[.;:!?]/)
        .pop() ?? '';
    const window = clause.trim().split(/\s+/).slice(-6).join(' ');
    // "students at universities": the audience uses the organisation, it does not work there.
    if (CONSUMER_SUBJECT.test(window)) continue;
    const atHead = clause.trim().split(/\s+/).filter(Boolean).length <= 2;
    if (!(b2b || ORG_CONTEXT.test(window) || COMPANY_AFTER.test(after) || atHead)) continue;
    for (const e of lookup(ORG_INDEX, hay.slice(h.start, h.end))) found.push({ at: h.start, e });
    spans.push(h);
  }
  const orgSpans = [...spans];
  for (const h of b.findOn(hay, CHAIN_RE)) {
    const after = COMPANY_AFTER.exec(hay.slice(h.end));
    if (!after && !SECTOR_BEFORE.test(hay.slice(0, h.start))) continue;
    for (const t of b.findOn(hay.slice(0, h.end), TERM_RE).filter((t) => t.start >= h.start)) {
      // "law and accountancy firms": "accountancy firms" was read as an organisation already.
      if (orgSpans.some((s) => t.start < s.end && s.start < t.end)) continue;
      const term = hay.slice(t.start, t.end);
      // "IT" the sector is written in capitals; "it" is a pronoun.
      if (term === 'it' && b.text.slice(t.start, t.end) !== 'IT') continue;
      if (term === 'media' && /\b(?:social|paid|owned|earned|digital)\s+$/.test(hay.slice(0, t.start))) continue;
      for (const e of lookup(TERM_INDEX, term)) found.push({ at: t.start, e });
    }
    spans.push({ start: h.start, end: h.end + (after ? after[0].length : 0) });
  }
  found.sort((x, y) => x.at - y.at);
  return { entries: uniq(found.map((f) => f.e)), spans };
}

const EMP = [
  { re: new RegExp(`\\b(\\d[\\d,]*)\\s*(?:-|to)\\s*(\\d[\\d,]*)\\s*\\+?\\s*${EMPLOYEE_WORDS}`, 'g'), kind: 'range' },
  {
    re: new RegExp(`\\b(?:over|more than|above|at least|min(?:imum)?(?: of)?)\\s*(\\d[\\d,]*)\\s*\\+?\\s*${EMPLOYEE_WORDS}`, 'g'),
    kind: 'min',
  },
  { re: new RegExp(`\\b(\\d[\\d,]*)\\s*\\+\\s*${EMPLOYEE_WORDS}`, 'g'), kind: 'min' },
  { re: new RegExp(`\\b(?:under|fewer than|less than|below)\\s*(\\d[\\d,]*)\\s*${EMPLOYEE_WORDS}`, 'g'), kind: 'below' },
  { re: new RegExp(`\\b(?:up to|no more than|at most)\\s*(\\d[\\d,]*)\\s*${EMPLOYEE_WORDS}`, 'g'), kind: 'max' },
] as const;

function findCompanySize(
  b: Brief,
  hay: string,
): { sizes: { size: Exclude<CompanySize, 'any'>; at: number }[]; spans: Span[]; unresolved: string[] } {
  const sizes: { size: Exclude<CompanySize, 'any'>; at: number }[] = [];
  const spans: Span[] = [];
  const unresolved: string[] = [];
  const num = (s: string | undefined): number => Number((s ?? '').replace(/,/g, ''));
  for (const { re, kind } of EMP) {
    for (const h of b.findOn(hay, re)) {
      if (spans.some((s) => s.start < h.end && h.start < s.end)) continue;
      const [a, c] = h.groups;
      const min = kind === 'range' || kind === 'min' ? num(a) : null;
      const max = kind === 'range' ? num(c) : kind === 'below' ? num(a) - 1 : kind === 'max' ? num(a) : null;
      const size = sizeForEmployees(min, max);
      if (size) sizes.push({ size, at: h.start });
      else unresolved.push(`company size "${h.text.trim()}" spans more than one size band; company size left at any`);
      spans.push(h);
    }
  }
  for (const { size, re } of SIZE_RES) {
    for (const h of b.findOn(hay, re)) {
      if (spans.some((s) => s.start < h.end && h.start < s.end)) continue;
      sizes.push({ size, at: h.start });
      spans.push(h);
    }
  }
  return { sizes, spans, unresolved };
}

function findSeniority(b: Brief, hay: string): { levels: { level: Seniority; at: number }[]; spans: Span[] } {
  const levels: { level: Seniority; at: number }[] = [];
  const spans: Span[] = [];
  for (const { level, re } of SENIORITY_RES) {
    for (const h of b.findOn(hay, re)) {
      if (spans.some((s) => s.start < h.end && h.start < s.end)) continue;
      if (level === 'ic' && SENIOR_QUALIFIERS.test(hay.slice(0, h.start))) continue;
      levels.push({ level, at: h.start });
      spans.push(widen(hay, h));
    }
  }
  return { levels, spans };
}

// Take "finance" in "finance directors" and "marketing" in "heads of marketing"
// along with the title, so they are not read as industries or interests.
function widen(hay: string, h: Hit): Span {
  let start = h.start;
  for (let i = 0; i < 3; i++) {
    const m = /([a-z&/-]+)\s+$/.exec(hay.slice(0, start));
    if (!m || !FUNCTION_WORDS.has(m[1]!)) break;
    start = m.index;
  }
  let end = h.end;
  const of = /^\s+(?:of|for)\s+/.exec(hay.slice(end));
  if (of || /\bof\s*$/.test(hay.slice(h.start, h.end))) {
    let cursor = end + (of ? of[0].length : 0);
    for (let i = 0; i < 3; i++) {
      const m = /^\s*([a-z&/-]+)/.exec(hay.slice(cursor));
      if (!m || !FUNCTION_WORDS.has(m[1]!)) break;
      cursor += m[0].length;
      end = cursor;
    }
  }
  return { start, end };
}

export function extractFirmographics(b: Brief): FirmographicsResult {
  // All three read the same snapshot: "small business owners" is both a size
  // ("small business") and a title ("business owners").
  const hay = b.view;
  const b2b = hasB2bSignal(hay);
  const industries = findIndustries(b, hay, b2b);
  const size = findCompanySize(b, hay);
  const seniority = findSeniority(b, hay);
  for (const s of [...industries.spans, ...size.spans, ...seniority.spans]) b.claim(s);

  const distinctSizes = uniq(size.sizes.sort((x, y) => x.at - y.at).map((s) => s.size));
  // A size the brief names ("mid-market ... roughly 50-500 staff") says which
  // band a rough employee range that spans two was meant to describe.
  const unresolved = distinctSizes.length === 1 ? [] : [...size.unresolved];
  let companySize: CompanySize = 'any';
  if (distinctSizes.length === 1) companySize = distinctSizes[0]!;
  else if (distinctSizes.length > 1)
    unresolved.push(`company size: the brief names ${distinctSizes.join(' and ')} companies; a persona holds one size, left at any`);

  const levels = uniq(seniority.levels.sort((x, y) => x.at - y.at).map((l) => l.level)).sort(
    (x, y) => SENIORITIES.indexOf(x) - SENIORITIES.indexOf(y),
  );
  const sicCodes = uniq(industries.entries.flatMap((e) => e.codes));
  const confidence: Record<string, number> = {};
  if (sicCodes.length) confidence['firmographics.sicCodes'] = 0.8;
  if (levels.length) confidence['firmographics.seniority'] = 0.85;
  if (companySize !== 'any') confidence['firmographics.companySize'] = 0.9;
  return { sicCodes, industries: industries.entries.map((e) => e.label), seniority: levels, companySize, unresolved, confidence };
}
