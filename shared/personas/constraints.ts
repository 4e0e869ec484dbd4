import { z } from 'zod';
import raw from './lexicon/constraints.json';
import { RegexSource, parseLexicon } from './lexicon/load';
import { Brief, Span } from './text';

// Asks that no persona field can hold. They are reported for a person to
// review (README: unresolvedConstraints) and claimed so no other extractor
// turns them into a guessed interest or place.

interface Rule {
  re: RegExp;
  why: string;
  /** Extend the claim back to "who"/"people who" so the behaviour reads whole. */
  backToWho?: boolean;
  /** Claim only the first capture group, leaving the rest readable ("within 5 miles of" LS6: LS6 is still the area). */
  claimGroup?: boolean;
}

// The rules are data (lexicon/constraints.json): a pattern with named parts
// ({REST}: the rest of the ask, {RECENCY}: a time window, {VENUE}: a place of
// business), why no field holds it, and how much of it to claim.
const Constraints = z.object({
  about: z.string(),
  parts: z.object({ REST: RegexSource, RECENCY: RegexSource, VENUE: RegexSource }),
  rules: z.array(
    z.object({ pattern: z.string().min(1), why: z.string().min(1), backToWho: z.boolean().optional(), claimGroup: z.boolean().optional() }),
  ),
});
const C = parseLexicon('constraints.json', Constraints, raw);
const RULES: readonly Rule[] = C.rules.map(({ pattern, ...rule }) => ({
  ...rule,
  re: new RegExp(
    RegexSource.parse(
      pattern
        .replaceAll('{BEHAVIOUR_REST}', `${C.parts.REST}${C.parts.RECENCY}`)
        .replaceAll('{REST}', C.parts.REST)
        .replaceAll('{RECENCY}', C.parts.RECENCY)
        .replaceAll('{VENUE}', C.parts.VENUE),
    ),
  ),
}));

export interface ConstraintsResult {
  unresolved: string[];
}

export function findUnresolved(b: Brief): ConstraintsResult {
  const unresolved: string[] = [];
  for (const rule of RULES) {
    for (const h of b.find(rule.re)) {
      let span: Span = h;
      if (rule.backToWho) {
        const before = b.view.slice(Math.max(0, h.start - 40), h.start);
        const who = /\b(?:people\s+|those\s+|anyone\s+|everyone\s+|users\s+)?who\s+(?:have\s+|has\s+|had\s+|recently\s+)*$/.exec(before);
        if (who) span = { start: h.start - (before.length - who.index), end: h.end };
      }
      const phrase = b.slice(span).replace(/^[\s,]+|[\s,]+$/g, '');
      if (!phrase) continue;
      unresolved.push(`"${phrase}": ${rule.why}`);
      b.claim(rule.claimGroup && h.groupSpans[0] ? h.groupSpans[0] : span);
    }
  }
  return { unresolved };
}
