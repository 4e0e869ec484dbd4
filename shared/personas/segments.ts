import { Span } from './text';

// A brief cut into sentences and clauses: at sentence ends, semicolons,
// colons (a label and its value), spaced dashes, parentheses and commas that
// join a new clause (", but ...", ", and we ..."). Each piece records how it
// joins the one before, which tells a label's value and an aside apart.

export type Join = 'start' | 'colon' | 'dash' | 'paren' | 'other';
export interface Segment extends Span {
  join: Join;
}

// Sticky patterns tested at an index, so the scan never copies the rest of the text.
const SENTENCE_END = /[.!?]+(?:\s|$)/y;
const LOWER_NEXT = /[.!?]+\s+[a-z]/y;
const LABEL_COLON = /:(?:\s|$)/y;
const DASH = / - /y;
const CONJ =
  /, (?=(?:but|so|yet|while|whereas|because|although|though)\s|and (?:we|they|i|it|this|our|you)\b)| (?=but (?:we|i|they|you|our)\b)/y;

function at(re: RegExp, text: string, i: number): boolean {
  re.lastIndex = i;
  return re.test(text);
}

/** Sentences and their clauses: split at ; : " - ", parentheses and clause-joining conjunctions. */
export function segments(text: string): Segment[] {
  const out: Segment[] = [];
  let start = 0;
  let join: Join = 'start';
  const lowerWriting = lowerCaseWriting(text);
  const push = (end: number, next: Join, skip: number): void => {
    if (end > start) out.push({ start, end, join });
    start = end + skip;
    join = next;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '(') {
      const close = text.indexOf(')', i);
      const end = close < 0 ? text.length : close;
      push(i, 'paren', 1);
      push(end, 'other', 1);
      i = end;
      continue;
    }
    if (at(SENTENCE_END, text, i) && !abbreviation(text, i) && (lowerWriting || !at(LOWER_NEXT, text, i))) push(i, 'other', 1);
    else if (c === ';') push(i, 'other', 1);
    else if (c === ':' && at(LABEL_COLON, text, i)) push(i, 'colon', 1);
    else if (c === ' ' && at(DASH, text, i)) push(i, 'dash', 3);
    else if ((c === ',' || c === ' ') && at(CONJ, text, i)) push(i, 'other', c === ',' ? 2 : 1);
  }
  push(text.length, 'other', 0);
  return out
    .map((s) => {
      const part = text.slice(s.start, s.end);
      const lead = part.length - part.trimStart().length;
      return { ...s, start: s.start + lead, end: s.start + lead + part.trim().replace(/[\s.!?;:,]+$/, '').length };
    })
    .filter((s) => s.end > s.start);
}

// A title or abbreviation before a name ("St. Albans", "Dr. Smith", "U.K.") is
// no sentence end; a company suffix ("Vale Brewing Co.") ends one before a capital.
function abbreviation(text: string, dot: number): boolean {
  return /(?:^|\s)(?:st|mr|mrs|ms|dr|vs|e\.g|i\.e|approx|no|u\.k|u\.s)$/i.test(text.slice(Math.max(0, dot - 6), dot));
}

// A brief typed in lower case ("hey - need a persona. thirty-somethings, uk wide.")
// starts its sentences in lower case too: its full stops end sentences.
export function lowerCaseWriting(text: string): boolean {
  const starts = [...text.matchAll(/[.!?]\s+([A-Za-z])/g)].map((m) => m[1]!);
  return starts.length > 0 && starts.filter((c) => c === c.toLowerCase()).length * 2 >= starts.length;
}
