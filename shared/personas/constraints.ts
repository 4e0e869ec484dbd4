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

const RECENCY =
  '(?:\\s+(?:in|within|during|over|for)\\s+the\\s+(?:last|past|previous)\\s+(?:\\d+\\s+|few\\s+|couple of\\s+|two\\s+|three\\s+|six\\s+)?(?:days?|weeks?|months?|years?|hours?)|\\s+(?:last|this)\\s+(?:week|weekend|month|year|summer|winter|christmas)|\\s+yesterday|\\s+recently|\\s+since\\s+[a-z0-9 ]+?(?=[.;,]|$))?';
const VENUE =
  '(?:stores?|shops?|branch(?:es)?|showrooms?|websites?|web ?sites?|site|locations?|pharmac(?:y|ies)|venues?|dealerships?|outlets?|restaurants?|gyms?|premises|stands?|booths?|app|page|landing page)';
// The rest of the ask, up to the next clause or a target we can hold
// ("... aged 25 to 44 in London" keeps its ages and city).
const REST = '(?:(?!\\s(?:aged|ages|in|across|around|who|between|over|under|from|excluding|but)\\b)[^.;,\\u0000])*';
const BEHAVIOUR_REST = `${REST}${RECENCY}`;

const RULES: readonly Rule[] = [
  {
    re: new RegExp(`\\b(?:(?:with|using|and|plus)\\s+)?(?:a\\s+|an\\s+)?look[- ]?alikes?\\b${REST}`),
    why: 'lookalike modelling needs a seed list we do not hold',
  },
  {
    re: new RegExp(
      `\\b(?:lookalikes? of |similar to )?(?:our|my)\\s+(?:own\\s+)?(?:top\\s+[^ ]+\\s+)?(?:[a-z-]+\\s+)?(?:crm|customer (?:list|database|data|file|base)|email (?:list|subscribers|database)|newsletter (?:subscribers|list)|subscribers|mailing list|database|first[- ]party data|loyalty (?:members|scheme members|card holders|programme members)|app users|website visitors|site visitors|customers|clients|members|followers|donors|leads|contacts|buyers|data|audience|audiences|purchasers|users|fans)\\b${REST}`,
    ),
    why: 'first-party audience we do not hold',
  },
  {
    re: new RegExp(
      `\\b(?:first[- ]party|1st[- ]party|customer match|crm (?:list|lists|data|segments?|upload)|hashed e-?mails?|e-?mail addresses|device ids?|advertising ids?|mobile ad ids?|maids)\\b${REST}`,
    ),
    why: 'first-party data we do not hold',
  },
  {
    re: new RegExp(`\\b(?:re-?target(?:ing|ed)?|re-?marketing|remarket(?:ing)? to|retarget)\\b${REST}`),
    why: 'retargeting needs site or app data we do not hold',
  },
  {
    re: new RegExp(
      `\\b(?:target )?account lists?\\b${REST}|\\babm lists?\\b${REST}|\\bnamed accounts\\b${REST}|\\bour target accounts\\b${REST}`,
    ),
    why: 'account list we do not hold',
  },
  {
    re: new RegExp(
      `\\b(?:have\\s+|has\\s+|had\\s+|recently\\s+)*(?:visited|been to|walked into|entered|shopped at|stopped at|browsed|viewed)\\s+(?:a\\s+|an\\s+|the\\s+|our\\s+|their\\s+)?(?:competitors?'?s?'?\\s+|rivals?'?s?'?\\s+)?(?:[a-z'-]+\\s+){0,2}?${VENUE}\\b${RECENCY}`,
    ),
    why: 'visit behaviour we cannot target',
    backToWho: true,
  },
  {
    re: new RegExp(
      `\\b(?:abandoned|left)\\s+(?:a\\s+|an\\s+|their\\s+|the\\s+)?(?:basket|cart|checkout|booking|application)s?\\b${BEHAVIOUR_REST}`,
    ),
    why: 'on-site behaviour we cannot target',
    backToWho: true,
  },
  { re: new RegExp(`\\b(?:basket|cart) abandoners?\\b${REST}`), why: 'on-site behaviour we cannot target' },
  {
    re: new RegExp(
      `\\b(?:watched|viewed|saw|seen|engaged with|clicked(?: on)?|opened|interacted with|liked|commented on|shared|downloaded|installed|signed up (?:to|for)|subscribed to|bought from|purchased from|ordered from|used)\\s+${REST}?\\b(?:our|my)\\b${BEHAVIOUR_REST}`,
    ),
    why: 'engagement with our own media or products, which needs first-party data',
    backToWho: true,
  },
  {
    re: new RegExp(
      `\\b(?:bought|purchased|ordered|booked|searched for|googled|downloaded|applied for|signed up for|moved house|switched)\\b[^.;,\\u0000]*?(?:\\s+(?:in|within|during|over)\\s+the\\s+(?:last|past|previous)\\s+(?:\\d+\\s+|few\\s+)?(?:days?|weeks?|months?|years?)|\\s+(?:last|this)\\s+(?:week|weekend|month|year)|\\s+yesterday)\\b`,
    ),
    why: 'past behaviour in a time window we cannot target',
    backToWho: true,
  },
  {
    re: new RegExp(
      `\\b(?:with\\s+)?(?:a\\s+|an\\s+)?(?:credit (?:scores?|ratings?|history|limits?)|net worth (?:over|above|of)|ccjs?|county court judgments?)\\b${REST}`,
    ),
    why: 'credit data we cannot target',
  },
  {
    re: new RegExp(
      `\\b(?:who\\s+)?(?:spent|spend|spending|spends)\\s+(?:over|more than|at least|above|under|less than)\\s+[£$€]\\s?\\d${REST}`,
    ),
    why: 'spend thresholds we cannot target',
  },
  {
    re: new RegExp(
      `\\b(within\\s+\\d+(?:\\.\\d+)?\\s*(?:miles?|mi|km|kilomet(?:re|er)s?|met(?:re|er)s?|minutes?)\\s+(?:of|from|drive|walk|radius)(?:\\s+of)?)\\b${REST}`,
    ),
    why: 'radius targeting has no persona field',
    claimGroup: true,
  },
  {
    re: /\b(?:with|who have|who has|diagnosed with|suffering from|living with|sufferers of)\s+(?:type\s*[12]\s+)?(?:diabetes|cancer|depression|anxiety|hiv|dementia|asthma|arthritis|adhd|autism|obesity|a disability|disabilities|mental health (?:conditions|issues|problems)|chronic [a-z]+|[a-z]+ conditions?|an illness|illnesses)\b[^.;,\u0000]*?(?=\s+(?:in|across|who|aged)\b|[.;,]|$)/,
    why: 'health conditions are special-category data and cannot be targeted',
  },
  {
    re: /\b(?:muslim|christian|jewish|hindu|sikh|buddhist|catholic|religious|gay|lesbian|lgbtq?\+?|bisexual|transgender|black|ethnic minority|bame|asian|white)\s+(?:people|men|women|audiences?|consumers|families|communities|users|customers|households|adults|voters|students|professionals|mums|dads|parents|youth)\b/,
    why: 'special-category characteristics cannot be targeted',
  },
  {
    re: /\b(?:english|welsh|gaelic|irish|spanish|polish|french|german|italian|portuguese|arabic|urdu|hindi|punjabi|bengali|gujarati|tamil|chinese|mandarin|cantonese|russian|romanian|turkish|japanese|korean|somali|ukrainian)[- ]speak(?:ing|ers)\b/,
    why: 'language has no persona field',
  },
  {
    re: new RegExp(`\\b(?:bought|purchased|ordered|booked|shopped)\\s+(?:from|with)\\s+us\\b${REST}`),
    why: 'our own buyers are a first-party list we do not hold',
    backToWho: true,
  },
];

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
