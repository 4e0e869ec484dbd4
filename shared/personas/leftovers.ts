import { Clause, NON_AUDIENCE, asksAboutAudience } from './discourse';
import { GENERIC_PEOPLE } from './lexicon/people';
import { Analysis } from './nlp';
import { Brief, Span, alternation } from './text';
import { WORDS } from './lexicon/words';

// Leftover accounting. After every field has taken its words, each clause of
// the brief is either represented (some of its words became a field), plain
// campaign prose (tone, budget, dates, channel), or reported in
// unresolvedConstraints with its words: a constraint is never dropped silently.

export type ClauseStatus = 'represented' | 'prose' | 'empty' | 'unresolved';

export interface ClauseAccount extends Span {
  text: string;
  status: ClauseStatus;
}

// Campaign prose: how, when and where the ads run, not who sees them.
const PROSE = new RegExp(`\\b(?:${alternation(WORDS.proseWords)})\\b|[£$€]\\s?\\d`);
// Words that carry no audience constraint on their own.
const EMPTY_WORDS: ReadonlySet<string> = new Set(WORDS.emptyWords);
// Asks inside an otherwise represented clause that no field can hold: a time
// window on behaviour ("watched Wimbledon last year") or attendance of a named
// event, which is a list we do not have.
const WINDOW =
  /\b(?:last|this|next|past|previous)\s+(?:\d+\s+|few\s+|two\s+|three\s+|six\s+)?(?:year|month|week|weekend|summer|winter|spring|autumn|season|days?|months|weeks|years)\b|\bin the (?:last|past|next)\b/i;
const ATTENDED = /\b(?:attend(?:ed|ees|ing|s)?|delegates|came to|were at|registered for|visited)\b(?=[^,.;]*\b(?:[A-Z][a-z]+|our)\b)/;
const CONTENT_POS = new Set(['NOUN', 'PROPN', 'VERB']);

function clauses(text: string): Span[] {
  const out: Span[] = [];
  const cut = /[.;:!?,()]+|\s-\s|\s(?=(?:who|whose|which|but|only|and who|and whose)\s)/g;
  let start = 0;
  let m: RegExpExecArray | null;
  while ((m = cut.exec(text)) !== null) {
    out.push({ start, end: m.index });
    start = m.index + m[0].length;
    if (m[0].length === 0) cut.lastIndex++;
  }
  out.push({ start, end: text.length });
  return out
    .map((s) => {
      const raw = text.slice(s.start, s.end);
      const lead = raw.length - raw.trimStart().length;
      return { start: s.start + lead, end: s.start + lead + raw.trim().length };
    })
    .filter((s) => s.end > s.start);
}

// "Any gender", "any age", "gender: any": the field's default holds the ask.
const DEFAULT_ASK =
  /^(?:(?:any|all|either|both)\s+(?:genders?|sexes|ages?|age groups?|incomes?|income bands?|company sizes?|sizes?|sectors?|industr(?:y|ies))(?:\s+(?:are|is)\s+(?:fine|ok|okay|welcome|acceptable))?|(?:gender|sex|age|income|company size)\s*(?:is\s+)?(?:any|all|open|not important))$/i;

/**
 * Account for every clause; `phrases` are the interest and intent strings the
 * persona holds, `roles` the clauses of the brief with what each is about.
 */
export function accountClauses(b: Brief, a: Analysis, phrases: readonly string[], roles: readonly Clause[] = []): ClauseAccount[] {
  const held = phrases.map((p) => p.toLowerCase()).filter((p) => p.length > 2);
  return clauses(b.text).map((span) => {
    const text = b.text.slice(span.start, span.end);
    const lower = text.toLowerCase();
    const clause = roles.find((r) => span.start >= r.start && span.start < r.end);
    if (clause && NON_AUDIENCE.has(clause.role)) return { ...span, text, status: 'prose' as const };
    if (DEFAULT_ASK.test(text.replace(/^(?:and|but|or)\s+/i, '').replace(/\s*\.?$/, '')))
      return { ...span, text, status: 'represented' as const };
    // The advertiser named as the subject ("We want ...") was claimed, but it is no field.
    const after = clause?.advertiser && clause.advertiser.end > span.start ? Math.min(clause.advertiser.end, span.end) : span.start;
    const claimed = !b.isFree({ start: after, end: span.end });
    const represented = claimed || held.some((p) => lower.includes(p));
    if (represented && (WINDOW.test(text) || ATTENDED.test(text.replace(/^\w/, (c) => c.toLowerCase())))) {
      return { ...span, text, status: 'unresolved' as const };
    }
    if (represented) return { ...span, text, status: 'represented' as const };
    const content = a.tokens.filter(
      (t) =>
        t.start >= span.start &&
        t.end <= span.end &&
        CONTENT_POS.has(t.pos) &&
        !EMPTY_WORDS.has(t.lemma) &&
        !GENERIC_PEOPLE.has(t.lower) &&
        !GENERIC_PEOPLE.has(t.lemma) &&
        /[a-z]/.test(t.lower),
    );
    if (!content.length) return { ...span, text, status: 'empty' as const };
    if (PROSE.test(lower) || !asksAboutAudience(a, span)) return { ...span, text, status: 'prose' as const };
    return { ...span, text, status: 'unresolved' as const };
  });
}

export function accountLeftovers(
  b: Brief,
  a: Analysis,
  phrases: readonly string[],
  roles: readonly Clause[] = [],
): { unresolved: string[]; clauses: ClauseAccount[] } {
  const all = accountClauses(b, a, phrases, roles);
  const unresolved = all
    .filter((c) => c.status === 'unresolved')
    .map((c) => `"${c.text.replace(/^(?:and|or|but)\s+/i, '')}": no persona field holds this; review before buying`);
  return { unresolved, clauses: all };
}
