import { z } from 'zod';
import { AgeBand, excludedAgeBand } from './ages';
import { genderWord } from './demographics';
import raw from './lexicon/negation.json';
import { WordList, parseLexicon } from './lexicon/load';
import { Analysis, Token } from './nlp';
import { Gender } from './persona-schema';
import { DAYPART } from './plan-asks';
import { Brief, Hit, MASK, Span, esc, splitList } from './text';
import { WORDS } from './lexicon/words';

// What a brief rules out, and how far each ruling-out reaches. A cue ("avoid",
// "no", "don't show next to", "... are off-limits", "gambling-free") governs a
// scope: the noun phrase or list after it (or, for a trailing cue, before it)
// up to the end of its clause, a new clause inside it (", and avoid ...",
// ", researching ...", " where ...") or a comma that does not continue a list.
// Everything in a scope is claimed, so no later step can read it as a target:
// an excluded category, place, age or sex is an exclusion, never a target.

const Vocabulary = z.object({
  about: z.string(),
  before: WordList,
  determiners: WordList,
  notAfterDeterminer: WordList,
  negators: WordList,
  negatableVerbs: WordList,
  verbObjects: WordList,
  adjacency: WordList,
  after: WordList,
  afterIntensifiers: WordList,
  freeNotBefore: WordList,
  stops: WordList,
  leading: WordList,
  leadingKeptBefore: WordList,
  trailing: WordList,
});
const V = parseLexicon('negation.json', Vocabulary, raw);

/** A clause of the brief and what it is about (see discourse.ts). */
interface RoleSpan extends Span {
  role: string;
  labelled: boolean;
}

export interface ExclusionFindings {
  exclusions: string[];
  ageBands: AgeBand[];
  genders: Gender[];
  /** Clauses that rule out times ("no ads after 9pm"): dayparting, which no field holds. */
  dayparts: string[];
}

/** A phrase as a pattern: words joined by spaces, "*" up to three words, hyphens optional. */
function pattern(phrase: string): string {
  return phrase
    .split(' ')
    .map((w) => (w === '*' ? "(?:[a-z'-]+\\s+){0,3}?" : `${esc(w).replace(/-/g, '[- ]?')}\\s+`))
    .join('')
    .replace(/\\s\+$/, '');
}
const alt = (xs: readonly string[]): string =>
  [...xs]
    .sort((a, b) => b.length - a.length)
    .map(pattern)
    .join('|');

const BOUNDED = (body: string, flags = 'g'): RegExp => new RegExp(`(?<![\\w'-])(?:${body})(?![\\w-])`, flags);
const NEGATED_VERB = `(?:${alt(V.negators)})\\s+(?:(?:to|be)\\s+)?(?:${alt(V.negatableVerbs)})(?:\\s+(?:${alt(V.verbObjects)}))?(?:\\s+(?:${alt(V.adjacency)}))?`;
const BEFORE = BOUNDED(`${NEGATED_VERB}|${alt(V.before)}`);
const DETERMINER = BOUNDED(alt(V.determiners));
const COPULA_AFTER = V.after.map((p) => p.replace(/^(is|are) /, `$1 (?:(?:${V.afterIntensifiers.join('|')}) )?`));
const AFTER = new RegExp(`(?<![\\w-])(?:${COPULA_AFTER.sort((a, b) => b.length - a.length).join('|')})(?![\\w-])`, 'g');
const FREE = /(?<![\w-])((?:[a-z]+-)*[a-z]+)-free(?![\w-])/g;
const NOT_AFTER_DETERMINER = new Set(V.notAfterDeterminer);
const FREE_NOT_BEFORE = new Set(V.freeNotBefore);
const STOP = new RegExp(`^(?:${alt(V.stops)})\\b`);
const CUE_AT_START = new RegExp(`^(?:${NEGATED_VERB}|${alt(V.before)}|${alt(V.determiners)})\\b`);

/** The words end by ruling out what precedes ("... is off-limits", "... excluded"). */
export function hasTrailingCue(words: string): boolean {
  AFTER.lastIndex = 0;
  return AFTER.test(words.toLowerCase());
}

/** The words open with a cue that rules something out ("No gambling", "Avoid ...", "Don't show next to ..."). */
export function opensWithCue(words: string): boolean {
  return CUE_AT_START.test(words.toLowerCase().replace(/^(?:please|and|but|also|obviously)\s+/, ''));
}
const NEW_SUBJECT = /^(?:we|they|i|it|this|our|you|who|whose|which|where|when|aged|based|living)\b/;
const LEADING = V.leading.map((w) => ({ w, re: new RegExp(`^${pattern(w)}\\s+`, 'i') }));
const KEPT_BEFORE = new RegExp(`^(?:${V.leadingKeptBefore.join('|')})\\b`, 'i');
const PEOPLE_LEAD = new Set(['anyone', 'anybody', 'people', 'those', 'someone', 'one']);
const TRAILING = new RegExp(`(?:\\s+|^)(?:${alt(V.trailing)})$`, 'i');

function tokenAt(a: Analysis, at: number): Token | undefined {
  return a.tokens.find((t) => t.start >= at && t.end > t.start);
}

/**
 * A new clause starts here (after a comma or "and"): a cue, a subject, a
 * relative or a finite verb. A gerund may be a listed thing ("gambling,
 * vaping and betting") and so may a compound ("will-writing", "get-rich-quick").
 */
function startsClause(a: Analysis, view: string, at: number): boolean {
  const rest = view.slice(at).trimStart();
  if (CUE_AT_START.test(rest) || NEW_SUBJECT.test(rest) || STOP.test(rest)) return true;
  const t = tokenAt(a, at + (view.slice(at).length - rest.length));
  if (!t || view[t.end] === '-' || t.lower.endsWith('ing')) return false;
  return t.pos === 'AUX' || t.pos === 'VERB';
}

function hardEnd(view: string, from: number, limit: number): number {
  let i = from;
  while (i < limit && view[i] !== MASK && !/[.;:!?()]/.test(view[i]!) && !view.startsWith(' - ', i)) i++;
  return i;
}

/** Where a forward scope ends. */
function forwardEnd(a: Analysis, view: string, from: number, limit: number): number {
  const end = hardEnd(view, from, limit);
  for (let i = from; i < end; i++) {
    const c = view[i]!;
    if (c === ',') {
      // A comma continues only a list that closes with and/or before the clause ends.
      if (startsClause(a, view, i + 1) || !/\b(?:and|or|nor)\b/.test(view.slice(i + 1, end))) return i;
    } else if (c === ' ' && i > from) {
      const rest = view.slice(i + 1, end);
      if (STOP.test(rest)) return i;
      const conj = /^(?:and|or|nor)\s+/.exec(rest);
      if (conj && startsClause(a, view, i + 1 + conj[0].length)) return i;
    }
  }
  return end;
}

/** Where a trailing cue's scope starts: its noun phrase, or a list closed by and/or. */
function backwardStart(view: string, cue: number, clauseStart: number): number {
  let from = Math.max(clauseStart, view.lastIndexOf(MASK, cue - 1) + 1);
  const parts = view.slice(from, cue).split(',');
  const last = parts[parts.length - 1]!;
  if (parts.length > 1 && !/\b(?:and|or)\b/.test(last)) return cue - last.length;
  // Extend over earlier list items only while they look like items (short, no verb or place phrase).
  let start = cue - last.length;
  for (let k = parts.length - 2; k >= 0; k--) {
    const item = parts[k]!;
    if (item.trim().split(/\s+/).length > 3 || /\b(?:aged|in|at|who|from|\d)/.test(item)) break;
    start -= item.length + 1;
  }
  from = start;
  return from;
}

/** Trim what is not the excluded thing: "any content about shipwrecks" -> "shipwrecks". */
export function cleanItem(raw: string): string {
  let s = raw.replace(/["'`]+$|^["'`]+/g, '').trim();
  for (let changed = true; changed;) {
    changed = false;
    for (const { w, re } of LEADING) {
      const m = re.exec(s);
      if (!m) continue;
      if (PEOPLE_LEAD.has(w) && KEPT_BEFORE.test(s.slice(m[0].length))) continue;
      s = s.slice(m[0].length);
      changed = true;
    }
    const t = TRAILING.exec(s);
    if (t && t.index > 0) {
      s = s.slice(0, t.index);
      changed = true;
    }
  }
  return s.replace(/[\s,;:.!?-]+$/, '').trim();
}

// "No particular audience": nothing is ruled out.
const NOTHING_NAMED: ReadonlySet<string> = new Set(WORDS.nothingNamed);
const generic = (item: string): boolean =>
  item
    .toLowerCase()
    .split(/[\s-]+/)
    .every((w) => !w || NOTHING_NAMED.has(w));

function addItems(found: ExclusionFindings, b: Brief, scope: Span, clause: Span): void {
  for (const part of splitList(b.slice(scope))) {
    const item = cleanItem(part);
    if (!item || generic(item)) continue;
    const age = item.split(/\s+/).length <= 3 ? excludedAgeBand(item) : null;
    const gender = item.split(/\s+/).length <= 2 ? genderWord(item) : null;
    if (age) found.ageBands.push(age);
    else if (gender) found.genders.push(gender);
    else if (DAYPART.test(item)) found.dayparts.push(b.slice(clause));
    else found.exclusions.push(item);
  }
}

interface Cue extends Span {
  scope: Span;
}

interface CueHits {
  before: Hit[];
  determiners: Hit[];
  after: Hit[];
  free: Hit[];
}

/** Every cue in the brief, found once; each clause takes its own. */
function findCues(b: Brief): CueHits {
  return { before: b.find(BEFORE), determiners: b.find(DETERMINER), after: b.find(AFTER), free: b.find(FREE) };
}

function cuesIn(b: Brief, a: Analysis, c: RoleSpan, hits: CueHits): Cue[] {
  const view = b.view;
  const inClause = (s: Span): boolean => s.start >= c.start && s.end <= c.end;
  const cues: Cue[] = [];
  for (const h of hits.before) {
    if (inClause(h)) cues.push({ ...h, scope: { start: h.end, end: forwardEnd(a, view, h.end, c.end) } });
  }
  for (const h of hits.determiners) {
    if (!inClause(h)) continue;
    const next = tokenAt(a, h.end);
    if (!next || next.start >= c.end || NOT_AFTER_DETERMINER.has(next.lower)) continue;
    const word = h.text.toLowerCase();
    // "not selling", "never miss": a negated verb is not a ruled-out thing,
    // but a gerund the clause opens with is ("Not betting.").
    const before = tokensBefore(a, h.start);
    const opensClause = !before || before.pos === 'PUNCT' || before.pos === 'CCONJ' || before.end <= c.start;
    if (word !== 'no' && (next.pos === 'VERB' || next.pos === 'AUX') && !(opensClause && next.lower.endsWith('ing'))) continue;
    if (/^(?:who|that|which)$/.test(tokensBefore(a, h.start)?.lower ?? '')) continue;
    cues.push({ ...h, scope: { start: h.end, end: forwardEnd(a, view, h.end, c.end) } });
  }
  for (const h of hits.after) {
    if (inClause(h)) cues.push({ ...h, scope: { start: backwardStart(view, h.start, c.start), end: h.start } });
  }
  for (const h of hits.free) {
    if (!inClause(h)) continue;
    const next = tokenAt(a, h.end);
    if (next && next.start < c.end && (next.pos === 'NOUN' || next.pos === 'PROPN') && !FREE_NOT_BEFORE.has(next.lower)) continue;
    const word = h.groupSpans[0]!;
    cues.push({ ...h, scope: word });
  }
  return cues.sort((x, y) => x.start - y.start || y.end - x.end);
}

function tokensBefore(a: Analysis, at: number): Token | undefined {
  let found: Token | undefined;
  for (const t of a.tokens) if (t.end <= at) found = t;
  return found;
}

/** Find, claim and sort everything the brief rules out, clause by clause. */
export function findExclusions(b: Brief, a: Analysis, clauses: readonly RoleSpan[]): ExclusionFindings {
  const found: ExclusionFindings = { exclusions: [], ageBands: [], genders: [], dayparts: [] };
  const hits = findCues(b);
  for (const c of clauses) {
    if (c.role === 'exclusion' && c.labelled) {
      addItems(found, b, c, c);
      b.claim(c);
      continue;
    }
    if (c.role !== 'audience' && c.role !== 'exclusion' && c.role !== 'plan') continue;
    for (const cue of cuesIn(b, a, c, hits)) {
      if (!b.isFree({ start: Math.min(cue.start, cue.scope.start), end: Math.max(cue.end, cue.scope.end) })) continue;
      addItems(found, b, cue.scope, c);
      b.claim({ start: Math.min(cue.start, cue.scope.start), end: Math.max(cue.end, cue.scope.end) });
    }
  }
  return found;
}
