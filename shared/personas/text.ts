// Text plumbing shared by the field extractors. Every extractor reads the
// brief through a Brief so that a phrase one extractor has taken (say an
// exclusion "except those in Birmingham") is invisible to the others (so
// Birmingham is not also added as a target city).

export const MASK = '\u0000';

export interface Span {
  start: number;
  end: number;
}

export interface Hit extends Span {
  /** The matched text in the brief's original casing. */
  text: string;
  groups: (string | undefined)[];
  /** Spans of the capture groups (regex `d` flag). */
  groupSpans: (Span | undefined)[];
}

const FANCY: Record<string, string> = {
  '\u2013': '-',
  '\u2014': '-',
  '\u2012': '-',
  '\u2212': '-',
  '\u2010': '-',
  '\u2011': '-',
  '\u2018': "'",
  '\u2019': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u00a0': ' ',
  '\u2026': '...',
};

export function normalise(raw: string): string {
  return (
    raw
      .replace(/[\u2010-\u2014\u2212\u2018\u2019\u201c\u201d\u00a0\u2026]/g, (c) => FANCY[c] ?? c)
      .replace(/\u0000/g, ' ')
      // "Pan-DACH", "pan-European": the prefix does not hide the place.
      .replace(/\b([Pp]an)-(?=[A-Z])/g, '$1 ')
      // A brief set out in lines ("Client: X" / "Audience: Y" / "- no gambling")
      // reads clause by clause: a line break ends one unless punctuation already does.
      .replace(/^[ \t]*(?:[-*\u2022]|\d+[.)])[ \t]+/gm, '')
      .replace(/([^\s.!?;:,])[ \t]*(?:\r?\n)+/g, '$1; ')
      .replace(/\s+/g, ' ')
      .trim()
  );
}

// ASCII-only lowering keeps every index identical to the original text.
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

// The global, indexed ('gd') copy of each pattern, compiled once: building it
// per call recompiled the large gazetteer and industry alternations for every
// brief. Safe to share because a scan runs to completion before the next.
const SCANNERS = new WeakMap<RegExp, RegExp>();

function scanner(re: RegExp): RegExp {
  let rx = SCANNERS.get(re);
  if (!rx) {
    let flags = re.flags.includes('g') ? re.flags : re.flags + 'g';
    if (!flags.includes('d')) flags += 'd';
    rx = new RegExp(re.source, flags);
    SCANNERS.set(re, rx);
  }
  return rx;
}

export class Brief {
  readonly text: string;
  readonly lower: string;
  private readonly taken: Uint8Array;
  // Both views are kept up to date by claim(), so reading them is free: the
  // clause-level steps claim often and read the views after every claim.
  private masked: string;
  private maskedCase: string;

  constructor(raw: string) {
    this.text = normalise(raw);
    this.lower = asciiLower(this.text);
    this.taken = new Uint8Array(this.text.length);
    this.masked = this.lower;
    this.maskedCase = this.text;
  }

  /** Lower-cased text with every claimed character replaced by MASK. */
  get view(): string {
    return this.masked;
  }

  /** Original-case text with claimed characters masked. */
  get caseView(): string {
    return this.maskedCase;
  }

  claim(span: Span): void {
    const start = Math.max(0, span.start);
    const end = Math.min(span.end, this.taken.length);
    if (end <= start) return;
    for (let i = start; i < end; i++) this.taken[i] = 1;
    const mask = MASK.repeat(end - start);
    this.masked = this.masked.slice(0, start) + mask + this.masked.slice(end);
    this.maskedCase = this.maskedCase.slice(0, start) + mask + this.maskedCase.slice(end);
  }

  isFree(span: Span): boolean {
    for (let i = span.start; i < span.end; i++) if (this.taken[i]) return false;
    return true;
  }

  slice(span: Span): string {
    return this.text.slice(span.start, span.end);
  }

  /** All matches of a global regex against the masked lower-case view. */
  find(re: RegExp, source: 'view' | 'lower' | 'caseView' = 'view'): Hit[] {
    return this.findOn(source === 'view' ? this.view : source === 'lower' ? this.lower : this.caseView, re);
  }

  /** Matches against a snapshot of a view (so several extractors can read the same text before any claims). */
  findOn(hay: string, re: RegExp): Hit[] {
    const rx = scanner(re);
    rx.lastIndex = 0;
    const hits: Hit[] = [];
    let m: RegExpExecArray | null;
    while ((m = rx.exec(hay)) !== null) {
      if (m[0].length === 0) {
        rx.lastIndex++;
        continue;
      }
      const idx = m.indices ?? [];
      hits.push({
        start: m.index,
        end: m.index + m[0].length,
        text: this.text.slice(m.index, m.index + m[0].length),
        groups: m.slice(1),
        groupSpans: idx.slice(1).map((p) => (p ? { start: p[0], end: p[1] } : undefined)),
      });
    }
    return hits;
  }
}

/** Escape a literal for use inside a RegExp. */
export function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One alternation regex over phrases, longest first so "north west" beats "west". */
export function alternation(phrases: readonly string[]): string {
  return [...new Set(phrases)]
    .sort((a, b) => b.length - a.length)
    .map((p) => esc(p).replace(/ /g, '[ -]'))
    .join('|');
}

/** Split a captured list ("yoga, pilates and wellness") into its items. */
export function splitList(s: string): string[] {
  return s
    .split(/\s*(?:,|;|\/|&|\band\/or\b|\band\b|\bor\b|\bplus\b)\s*/)
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
}

export function uniq<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

const LEADING_FILLER = /^(?:(?:a|an|the|their|his|her|its|some|those|these)\s+)+/i;

/** Trim filler words and punctuation from a captured phrase. */
export function tidy(s: string): string {
  return s
    .replace(/\u0000+/g, ' ')
    .replace(/^[\s,;:.!?'"()-]+|[\s,;:.!?'"()-]+$/g, '')
    .replace(LEADING_FILLER, '')
    .replace(/\s+/g, ' ')
    .trim();
}
