import { z } from 'zod';
import raw from './lexicon/discourse.json';
import { WordList, parseLexicon } from './lexicon/load';
import { Brief, Span, alternation } from './text';

// Asks about when or where the ads run, not about who sees them: dayparting
// ("weekday evenings", "no ads after 9pm") and placement rules ("fashion and
// lifestyle sites only", "run alongside football coverage"). No persona field
// holds them, so they are reported for review, never turned into an audience.

const Vocabulary = z.object({
  dayparting: z.object({ always: WordList, pluralOnly: WordList, singularBefore: WordList }),
  placementNouns: WordList,
});
const V = parseLexicon('discourse.json', Vocabulary, raw);

const DAY = '(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?s?';
/** A time of day or week that recurs: dayparting, not a flight date. */
export const DAYPART = new RegExp(
  `\\b(?:\\d{1,2}(?::\\d{2})?\\s*(?:am|pm)\\b|${DAY}\\s*(?:-|to)\\s*${DAY}\\b|(?:${alternation([...V.dayparting.always, ...V.dayparting.pluralOnly])})\\b|(?:morning|evening|afternoon|night|lunchtime|weekend|weekday)\\s+(?:${alternation(V.dayparting.singularBefore)})\\b)`,
  'i',
);
const PLACES = alternation(V.placementNouns);
const PLACEMENT = new RegExp(
  `\\b(?:(?:placements?|ads?|spots?|run|running|appear|appearing|placed|sit|seen)\\s+(?:only\\s+)?(?:on|in|within|alongside|around|during|next to)\\s+[^.;]{0,60}?\\b(?:${PLACES})\\b|\\bonly\\s+(?:on|in|within|alongside|around)\\s+[^.;]{0,60}?\\b(?:${PLACES})\\b)`,
  'i',
);

/** Report dayparting and placement rules in clauses that may carry them; claim what was reported. */
export function findPlanAsks(b: Brief, clauses: readonly (Span & { role: string })[], ruledOutTimes: readonly string[]): string[] {
  const out: string[] = [];
  for (const c of clauses) {
    if (c.role !== 'plan' && c.role !== 'audience') continue;
    const free = b.view.slice(c.start, c.end);
    const text = b.slice(c).replace(/^(?:and|but|so)\s+/i, '');
    if (c.role === 'plan' && DAYPART.test(free)) {
      // Quote the parts that carry the times, not the budget or dates beside them.
      const parts = text.split(/,\s+/).filter((p) => DAYPART.test(p));
      out.push(`"${parts.join(', ')}": when the ads run (dayparting) has no persona field; review before buying`);
      b.claim(c);
    } else if (PLACEMENT.test(free)) {
      out.push(`"${text}": a placement rule has no persona field; review before buying`);
      b.claim(c);
    }
  }
  for (const t of new Set(ruledOutTimes)) out.push(`"${t}": when the ads run (dayparting) has no persona field; review before buying`);
  return out;
}
