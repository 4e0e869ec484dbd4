import { AgeBand, excludedAgeBand } from './ages';
import { genderWord } from './demographics';
import { GENERIC_PEOPLE } from './lexicon/people';
import { Gender } from './persona-schema';
import { Brief, MASK, Span, splitList, tidy, uniq } from './text';

// Search negatives, exclusions, interests and intent topics: the free-text
// parts of a persona. Interests and intent are phrases introduced by a
// trigger ("interested in", "looking for"); intent is what people are about
// to buy or decide, interests are what they like or do.

const CHANNEL_WORDS = new Set([
  'search',
  'social',
  'display',
  'video',
  'ctv',
  'dooh',
  'audio',
  'cinema',
  'tv',
  'radio',
  'ooh',
  'programmatic',
  'families',
  'family',
  'couples',
]);
const isGeneric = (w: string): boolean => GENERIC_PEOPLE.has(w) || CHANNEL_WORDS.has(w) || /^\d+$/.test(w);
const meaningful = (phrase: string): boolean =>
  phrase
    .toLowerCase()
    .split(/[\s-]+/)
    .some((w) => w && !isGeneric(w.replace(/[^a-z0-9&+']/g, '')));

// Everyday phrasings of search negatives: "don't show ads for jobs or
// careers", "avoid searches about claims", "keep away from searches for X".
const EVERYDAY_NEGATIVES =
  /\b(?:(?:do not|don't|dont|never|not to)\s+(?:show|serve|run|trigger)\s+(?:our\s+|the\s+)?(?:search\s+)?(?:ads?|adverts?)\s+(?:for|on|against|to people (?:searching|looking)(?: for)?|on searches (?:about|for|mentioning|containing)|when people search(?: for)?)|(?:avoid|keep away from|stay away from|steer clear of|block|exclude)\s+(?:any\s+)?(?:searches|search terms|queries|search queries)\s+(?:about|for|on|mentioning|containing|like|around)|(?:we )?(?:don't|do not) want (?:any\s+)?(?:searches|queries|search terms) (?:about|for|mentioning|containing|like))\s+([^.;\u0000]+)/g;

export function findNegativeKeywords(b: Brief): string[] {
  const everyday: string[] = [];
  for (const h of b.find(EVERYDAY_NEGATIVES)) {
    for (const item of splitList(h.groups[0] ?? '')) {
      const kw = item
        .replace(/^["'`]+|["'`]+$/g, '')
        .replace(/^(?:any|the)\s+/, '')
        .trim()
        .toLowerCase();
      if (kw) everyday.push(kw);
    }
    b.claim(h);
  }
  return uniq([...everyday, ...labelledNegatives(b)]);
}

function labelledNegatives(b: Brief): string[] {
  const re =
    /\b(?:negative (?:keywords?|terms|kws?)|negatives|neg(?:ative)? kws?|exclude (?:the )?(?:search )?(?:terms|keywords)|block(?:ed)? (?:keywords|terms)|keyword exclusions)\s*(?:[:=-]|include|are|like|such as)?\s*([^.;\u0000]+)/g;
  const out: string[] = [];
  for (const h of b.find(re)) {
    const list = h.groups[0] ?? '';
    for (const item of splitList(list)) {
      const kw = item
        .replace(/^["'`]+|["'`]+$/g, '')
        .trim()
        .toLowerCase();
      if (kw) out.push(kw);
    }
    b.claim(h);
  }
  return uniq(out);
}

export interface ExclusionFindings {
  exclusions: string[];
  ageBands: AgeBand[];
  genders: Gender[];
}

// "Exclude: a, b, c" runs to the end of the sentence; "excluding a and b"
// stops at the next comma.
const EXCLUSION_LIST = /\b(?:exclude|excluding|exclusions?|do not target|don't target)\s*:\s*([^.;\u0000]+)/g;
const EXCLUSION =
  /(?:\b(?:excluding|exclude|excludes|except(?:\s+for)?|but\s+not|and\s+not|apart\s+from|other\s+than|avoid(?:ing)?|minus|without|do\s+not\s+target|don't\s+target|never\s+target|no(?=\s+(?:under|over)[- ]?\d))|(?:^|[,;(]\s*|\.\s+)not)\s+([^.;:,)\u0000]+)/g;

export function findExclusions(b: Brief): ExclusionFindings {
  const found: ExclusionFindings = { exclusions: [], ageBands: [], genders: [] };
  for (const h of [...b.find(EXCLUSION_LIST), ...b.find(EXCLUSION)]) {
    if (!b.isFree(h)) continue;
    const span = h.groupSpans[0];
    if (!span) continue;
    for (const raw of splitList(b.slice(span))) {
      const item = raw.replace(/^(?:the|a|an|any|all)\s+/i, '').trim();
      if (!item) continue;
      const age = excludedAgeBand(item);
      const gender = genderWord(item);
      if (age) found.ageBands.push(age);
      else if (gender && item.split(/\s+/).length <= 2) found.genders.push(gender);
      else found.exclusions.push(item);
    }
    b.claim(h);
  }
  return found;
}

export interface TopicPhrase extends Span {
  kind: 'interest' | 'intent';
  items: string[];
}

const INTENT =
  'in[- ]market for|in the market for|in[- ]market|looking for|looking to (?:buy|get|switch(?: to)?|book|move(?: to)?|hire|find|start|invest in|rent|lease|upgrade(?: to)?|replace|refinance|remortgage)|' +
  'shopping (?:around )?for|searching for|researching|planning (?:to (?:buy|get|book|move|take|visit|start|switch|renovate|build)|for)|planning|considering|evaluating|comparing|' +
  'thinking (?:about|of) (?:buying|getting|switching to|booking)|about to (?:buy|get|book|start)|ready to buy|intending to buy|want(?:ing)? to (?:buy|get|book|switch to)|' +
  'raising|switching to|(?:search )?(?:ads?|adverts?|campaigns?)\\s+(?:for|promoting)|promoting|in need of|needing|seeking|applying for|booking|buying|' +
  'visiting|travelling to|traveling to|flying to|holidaying in|heading to|moving to|relocating to';
const INTEREST =
  'interested in|with an interest in|an interest in|fans? of|followers of|passionate about|keen on|obsessed with|training for|' +
  "(?:who(?:'re| are| is)?|are|is|really|big|heavily|seriously)\\s+into";
const WHO_VERBS =
  'love|loves|like|likes|enjoy|enjoys|watch|watches|play|plays|follow|follows|listen to|listens to|read|reads|shop at|shops at|shop for|go to|goes to|' +
  'attend|attends|visit|visits|support|supports|collect|collects|drink|drinks|eat|eats|cook|cooks|bake|bakes|drive|drives|ride|rides|own|owns|use|uses|' +
  'stream|streams|practise|practises|practice|practices|subscribe to|bet on|invest in|travel|travels|game|games|run|runs|cycle|cycles|swim|swims|hike|hikes|' +
  'ski|skis|surf|surfs|fish|camp|dance|dances|knit|knits|garden|gardens|buy|buys|book|books|frequent|frequently [a-z]+|regularly [a-z]+|often [a-z]+|do|does';
const TRIGGER = new RegExp(
  `\\b(?:(${INTENT})|(${INTEREST})|who\\s+(?:also\\s+|regularly\\s+|often\\s+|really\\s+|already\\s+)?(${WHO_VERBS})|(with)(?=\\s+(?!a\\s+lookalike|an?\\s+interest|over\\b|more than|at least|under\\b|\\d)))(?:\\s+|(?=[.,;:!?]|$))`,
  'g',
);
// "Interests: esports, streaming." A labelled list runs to the end of the sentence.
const LABELLED =
  /\b(interests?|hobbies|passions|likes|intent(?: topics)?|in[- ]market(?: for)?|searching for|topics)\s*:\s*([^.;\u0000]+)/g;
const WEAK = /^(?:booking|buying|needing|seeking|raising|promoting|planning|considering|comparing|evaluating|researching|switching to)$/;
const SUFFIX =
  /(?<![\w-])([a-z0-9&'-]+)[\s-]+(enthusiasts|fans|lovers|buffs|fanatics|aficionados|devotees|addicts|junkies|goers|hobbyists|collectors|owners|buyers|shoppers|drinkers|eaters|watchers|readers|listeners|viewers|users|bettors|punters|gamers)(?![\w-])/g;
// One compiled "<suffix>$" per SUFFIX word (a fixed, small set).
const SUFFIX_AT_END = new Map<string, RegExp>();
function suffixAtEnd(suffix: string): RegExp {
  let re = SUFFIX_AT_END.get(suffix);
  if (!re) SUFFIX_AT_END.set(suffix, (re = new RegExp(`${suffix}$`, 'i')));
  return re;
}
const BUSINESS_OWNED =
  /^(?:business|businesses|company|companies|firm|shop|store|restaurant|practice|agency|salon|cafe|hotel|pub|bar|franchise|startup|sme|smb|farm|garage|studio|gym|brand|ecommerce|retail|nursery|clinic|construction|building|trade|property|dealership|brewery|factory|our|existing|current|my)$/;
const STOP_AFTER =
  /^\s*(?:who|that|which|whose|aged|age|ages|between|but|excluding|except|not|while|whilst|because|as well as|plus|also|living|based|located|across|within|around|near|from|using|with|and (?:are|who|have|has|want|need|live|work|also))\b/;
const PREPOSITION_START = /^(?:on|at|in|to|with|for|about|into|from)\b/;
// "with 50 employees", "who run small businesses": firmographics, not interests.
const OBJECT_GUARD =
  /\b(?:employees|staff|turnover|revenue|budgets?|headcount|business(?:es)?|compan(?:y|ies)|firms?|start-?ups?|smes?|smbs?|practices?|agencies)\b/;

function extent(b: Brief, from: number, limit: number): number {
  const view = b.view;
  let i = from;
  while (i < Math.min(limit, from + 90)) {
    const c = view[i]!;
    if (/[.;:!?,()]/.test(c) || c === MASK) break;
    if (c === ' ') {
      if (STOP_AFTER.test(view.slice(i))) break;
      if (/^\s(?:in|at)\s+(?:the\s+)?[A-Z]/.test(b.text.slice(i))) break;
    }
    i++;
  }
  return i;
}

function items(phrase: string): string[] {
  return splitList(phrase)
    .map((x) => tidy(x))
    .filter((x) => x.length > 1 && x.length <= 80 && meaningful(x));
}

/** Find topic phrases without claiming them (geography reads them first). */
export function findTopics(b: Brief): TopicPhrase[] {
  const out: TopicPhrase[] = [];
  for (const h of b.find(LABELLED)) {
    const list = items(h.groups[1] ?? '');
    if (list.length)
      out.push({ start: h.start, end: h.end, kind: /intent|market|search/.test(h.groups[0]!) ? 'intent' : 'interest', items: list });
  }
  const inLabel = (s: Span): boolean => out.some((o) => s.start < o.end && o.start < s.end);
  const triggers = b
    .find(TRIGGER)
    .filter((t) => !inLabel(t))
    .sort((x, y) => x.start - y.start);
  let reach = -1;
  triggers.forEach((t, i) => {
    const [intent, , verb, withWord] = t.groups;
    // A bare gerund inside another phrase ("looking for booking software")
    // is part of that phrase, not a new one.
    if (t.start < reach && WEAK.test(t.text.trim())) return;
    const next = triggers.slice(i + 1).find((n) => !WEAK.test(n.text.trim()))?.start ?? b.text.length;
    const end = extent(b, t.end, next);
    reach = Math.max(reach, end);
    let phrase = b.text.slice(t.end, end);
    if ((withWord || /^(?:run|runs|own|owns)$/.test(verb ?? '')) && OBJECT_GUARD.test(phrase.toLowerCase())) return;
    // "who game on PC", "who shop at Aldi": the verb carries the meaning.
    if (verb && PREPOSITION_START.test(phrase.toLowerCase())) phrase = `${b.text.slice(t.end - verb.length - 1, t.end).trim()} ${phrase}`;
    if (verb && !phrase.trim()) phrase = verb;
    const list = items(phrase);
    if (!list.length) return;
    out.push({ start: t.start, end, kind: intent ? 'intent' : 'interest', items: list });
  });
  for (const h of b.find(SUFFIX)) {
    if (out.some((o) => h.start < o.end && o.start < h.end)) continue;
    const [head, suffix] = h.groups as [string, string];
    if (suffix === 'owners' && BUSINESS_OWNED.test(head)) continue;
    if (isGeneric(head)) continue;
    const start = widenBack(b, h.start);
    const phrase = tidy(b.text.slice(start, h.end));
    if (!meaningful(phrase.replace(suffixAtEnd(suffix), ''))) continue;
    out.push({
      start,
      end: h.end,
      kind: suffix === 'buyers' || suffix === 'shoppers' ? 'intent' : 'interest',
      items: [phrase.toLowerCase()],
    });
  }
  return out.sort((x, y) => x.start - y.start);
}

// "car insurance shoppers": take up to two free, non-generic words before.
function widenBack(b: Brief, start: number): number {
  let s = start;
  for (let i = 0; i < 2; i++) {
    const m = /([a-z0-9&'-]+)\s+$/.exec(b.view.slice(0, s));
    if (!m || isGeneric(m[1]!) || /^(?:and|or|the|a|an|of|in|at|who|with|for|to)$/.test(m[1]!)) break;
    s = m.index;
  }
  return s;
}

/**
 * The audience noun a brief opens with ("Runners aged 20-35", "New parents in
 * ..."), once everything else in that clause has been claimed. Generic
 * nouns ("people", "households") are not interests.
 */
export function headTopics(b: Brief): { interests: string[]; intents: string[] } {
  // A leading label ("Target: ...", "Audience - ...") is not part of the audience.
  const text = b.caseView.replace(/^\s*(?:target(?:\s+audience)?|audience|persona|segment|brief)\s*[:-]\s*/i, (m) => MASK.repeat(m.length));
  const firstSentence = text.split(/[.!?;:](?:\s|$)/)[0] ?? '';
  const stop = firstSentence.search(
    /[,()]|\b(?:who|that|which|in|on|at|across|aged|with|from|within|around|near|based|living|between|but|excluding|except|looking|researching|shopping|planning|interested)\b/i,
  );
  const head = stop < 0 ? firstSentence : firstSentence.slice(0, stop);
  // A brief that opens with an instruction or a pronoun ("Promote our app",
  // "We sell ...") has no audience noun to read.
  if (
    /^\s*(?:we|our|i|my|you|your|please|let's|this|it|promote|target|reach|sell|advertise|launch|run|drive|show|serve|find|get|build|create|increase|boost|grow|upsell|retarget|need|want)\b/i.test(
      head,
    )
  ) {
    return { interests: [], intents: [] };
  }
  const interests: string[] = [];
  const intents: string[] = [];
  for (const chunk of head.split(MASK)) {
    for (const part of splitList(chunk)) {
      const phrase = tidy(part).replace(/^(?:and|or|of)\s+|\s+(?:and|or|of)$/gi, '');
      // Audience nouns are plural ("runners", "new parents"); a lone
      // adjective left over ("single", "expectant") or a singular noun
      // ("campaign") is not an interest.
      if (!phrase || !meaningful(phrase) || !/(?:[^su]s|-goers)$/i.test(phrase)) continue;
      if (/\b(?:buyers|shoppers)$/i.test(phrase)) intents.push(phrase.toLowerCase());
      else interests.push(phrase.toLowerCase());
    }
  }
  return { interests, intents };
}
