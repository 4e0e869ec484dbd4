import { z } from 'zod';
import { Clause, namesPeople } from './discourse';
import raw from './lexicon/topics.json';
import { WordList, parseLexicon } from './lexicon/load';
import { GENERIC_PEOPLE } from './lexicon/people';
import { Brief, MASK, Span, alternation, splitList, tidy, uniq } from './text';
import { WORDS } from './lexicon/words';

// Search negatives, interests and intent topics: the free-text parts of a
// persona (exclusions are read in negation.ts). Interests and intent are phrases introduced by a
// trigger ("interested in", "looking for"); intent is what people are about
// to buy or decide, interests are what they like or do.

const CHANNEL_WORDS: ReadonlySet<string> = new Set(WORDS.channelWords);
const isGeneric = (w: string): boolean => GENERIC_PEOPLE.has(w) || CHANNEL_WORDS.has(w) || /^\d+$/.test(w);
const meaningful = (phrase: string): boolean =>
  phrase
    .toLowerCase()
    .split(/[\s-]+/)
    .some((w) => w && !isGeneric(w.replace(/[^a-z0-9&+']/g, '')));

// Everyday phrasings of search negatives: "don't show ads for jobs or
// careers", "avoid searches about claims", "keep away from searches for X".
const EVERYDAY_NEGATIVES =
  /\b(?:(?:do not|don't|dont|never|not to)\s+(?:show|serve|run|trigger)\s+(?:our\s+|the\s+)?(?:search\s+)?(?:ads?|adverts?)\s+(?:on searches (?:about|for|mentioning|containing)|for|against|to people (?:searching|looking)(?: for)?|when people search(?: for)?)|(?:avoid|keep away from|stay away from|steer clear of|block|exclude)\s+(?:any\s+)?(?:searches|search terms|queries|search queries)\s+(?:about|for|on|mentioning|containing|like|around)|(?:we )?(?:don't|do not) want (?:any\s+)?(?:searches|queries|search terms) (?:about|for|mentioning|containing|like))\s+([^.;\u0000]+)/g;

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
  return uniq([...everyday, ...labelledNegatives(b), ...impliedNegatives(b)]);
}

// Negatives a search brief implies: a sentence that tells the buyer not to pay
// for some searches (a cue about searches, clicks, traffic or negatives) names
// the term in quotes ("no 'jobs' traffic") or as what the advertiser does not
// offer ("we don't sell DIY kits so neg that out", "there's no freemium tier
// so don't buy those searches"). A generic product noun after the term is not
// part of it ("freemium tier" is "freemium"); a plural head is made singular.
const SEARCH_BRIEF = /\b(?:search(?:es)?|ppc|google ads|adwords|bing ads)\b/;
const NOT_PAYING_CUE = /\b(?:searches|search|clicks|traffic|negatives?|neg)\b/;
const QUOTED = /(?:^|[\s(])['"]([a-z0-9][a-z0-9 &-]{0,30}?)['"](?=[\s,.;:!?)]|$)/g;
const NOT_OFFERED =
  /\b(?:we (?:don't|do not|dont) (?:do|sell|offer|have|provide|stock|make)|we(?:'re| are) not (?:a|an)|there(?:'s| is) no)\s+((?:[a-z0-9-]+\s+){0,2}?[a-z0-9-]+?)(?=\s*(?:[,.;:!?(]|\s-\s|\s(?:so|and|but|as|because)\b|$))/;
const PRODUCT_HEADS = /\s+(?:tiers?|kits?|products?|options?|versions?|plans?|services?|ranges?|insurers?|offers?)$/;

function impliedNegatives(b: Brief): string[] {
  if (!SEARCH_BRIEF.test(b.lower)) return [];
  const out: string[] = [];
  for (const h of b.find(/[^.;!?\u0000]+/g)) {
    const sentence = h.text.toLowerCase();
    if (!NOT_PAYING_CUE.test(sentence) || !/\b(?:don't|do not|dont|not|no|neg|negative|wasted?|out of|exclude|block)\b/.test(sentence))
      continue;
    const quoted = [...sentence.matchAll(QUOTED)].map((m) => m[1]!.trim());
    const denied = NOT_OFFERED.exec(sentence)?.[1];
    const terms = quoted.length ? quoted : denied ? [singular(denied.replace(PRODUCT_HEADS, ''))] : [];
    const kept = terms.filter((t) => t && !NOT_PAYING_CUE.test(t) && !isGeneric(t));
    if (!kept.length) continue;
    out.push(...kept);
    b.claim(h);
  }
  return out;
}

const singular = (phrase: string): string => phrase.replace(/([a-z]{3,}[^s])s$/, '$1');

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

export interface TopicPhrase extends Span {
  kind: 'interest' | 'intent';
  items: string[];
}

const Vocabulary = z.object({
  about: z.string(),
  intentTriggers: WordList,
  weakTriggers: WordList,
  interestTriggers: WordList,
  whoVerbs: WordList,
  suffixes: WordList,
  intentSuffixes: WordList,
});
const V = parseLexicon('topics.json', Vocabulary, raw);

const INTENT = alternation(V.intentTriggers);
const INTEREST = `${alternation(V.interestTriggers)}|(?:who(?:'re| are| is)?|are|is|really|big|heavily|seriously)\\s+into`;
const WHO_VERBS = `${alternation(V.whoVerbs)}|(?:frequently|regularly|often) [a-z]+`;
const TRIGGER = new RegExp(
  `\\b(?:(${INTENT})|(${INTEREST})|who\\s+(?:also\\s+|regularly\\s+|often\\s+|really\\s+|already\\s+)?(${WHO_VERBS})|(with)(?=\\s+(?!a\\s+lookalike|an?\\s+interest|over\\b|more than|at least|under\\b|\\d)))(?:\\s+|(?=[.,;:!?]|$))`,
  'g',
);
// "Interests: esports, streaming." A labelled list runs to the end of the sentence.
const LABELLED =
  /\b(interests?|hobbies|passions|likes|intent(?: topics)?|in[- ]market(?: for)?|searching for|topics)\s*:\s*([^.;\u0000]+)/g;
const WEAK = new RegExp(`^(?:${alternation(V.weakTriggers)})$`);
const SUFFIX = new RegExp(`(?<![\\w-])([a-z0-9&'-]+)[\\s-]+(${alternation(V.suffixes)})(?![\\w-])`, 'g');
const INTENT_SUFFIXES = new Set(V.intentSuffixes);
// "cider and craft beer lovers" after "craft beer" was read: "cider lovers" too.
const COORDINATED_SUFFIX = new RegExp(
  `(?<![\\w-])([a-z0-9&'-]+)\\s+(?:and|or|&)\\s+\\u0000[\\u0000 ]*\\s(${alternation(V.suffixes)})(?![\\w-])`,
  'g',
);
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
  /\b(?:employees|staff|turnover|revenue|budgets?|headcount|business(?:es)?|compan(?:y|ies)|firms?|start-?ups?|smes?|smbs?|practices?|agencies|farms?|shops?|salons?|restaurants?|pubs?|cafes?|garages?|clinics?)\b/;

function extent(b: Brief, from: number, limit: number): number {
  const view = b.view;
  let i = from;
  while (i < Math.min(limit, from + 90)) {
    const c = view[i]!;
    if (c === ',' && listContinues(view, i + 1, limit)) {
      i++;
      continue;
    }
    if (/[.;:!?,()]/.test(c) || c === MASK) break;
    if (c === ' ') {
      if (STOP_AFTER.test(view.slice(i))) break;
      if (/^\s(?:in|at)\s+(?:the\s+)?[A-Z]/.test(b.text.slice(i))) break;
    }
    i++;
  }
  return i;
}

// "who like culture, museums and food": a comma continues a list that closes
// with and/or before the clause ends, unless a new part of the brief starts.
function listContinues(view: string, at: number, limit: number): boolean {
  const rest = view.slice(at, limit);
  const clause = rest.slice(0, rest.search(/[.;:!?()\u0000]|$/));
  return !STOP_AFTER.test(rest) && !/^\s*(?:aged|in|across|near)\b/.test(rest) && /\b(?:and|or)\b/.test(clause);
}

/** The -ing form by English spelling rules: hike → hiking, swim → swimming, ski → skiing. */
export function gerund(verb: string): string {
  if (/ie$/.test(verb)) return `${verb.slice(0, -2)}ying`;
  if (/[^aeiouy]e$/.test(verb)) return `${verb.slice(0, -1)}ing`;
  if (/^[^aeiou]*[aeiou][^aeiouwxy]$/.test(verb)) return `${verb}${verb.slice(-1)}ing`;
  return `${verb}ing`;
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
    // "who fish", "who climb, boulder or do yoga": an activity verb alone, or listed with others,
    // is an item itself, named as the activity ("fishing", "bouldering").
    const activities = verb && (!phrase.trim() || /^\s*(?:,|and\b|or\b)/.test(phrase));
    if (activities) phrase = `${verb}${/^\s*,/.test(phrase) ? '' : ' '}${phrase.trimStart()}`;
    // "planning to move house": the verb says what is intended.
    const toVerb = intent ? / to ([a-z]+)$/.exec(intent) : null;
    if (toVerb && !/^(?:buy|get)$/.test(toVerb[1]!)) phrase = `${toVerb[1]} ${phrase}`;
    const list = items(phrase).map((x) => (activities && /^[a-z]+$/.test(x) ? gerund(x) : x));
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
    // "dog and cat owners", "cider and craft beer lovers": the suffix belongs to each.
    const coordinated = /([a-z0-9&'-]+)\s+(?:and|or|&)\s+$/.exec(b.view.slice(Math.max(0, start - 40), start));
    const also = coordinated && !isGeneric(coordinated[1]!) ? [`${coordinated[1]} ${suffix}`] : [];
    out.push({
      start: also.length ? start - coordinated![0].length : start,
      end: h.end,
      kind: INTENT_SUFFIXES.has(suffix) ? 'intent' : 'interest',
      items: [...also, phrase.toLowerCase()],
    });
  }
  for (const h of b.find(COORDINATED_SUFFIX)) {
    const [head, suffix] = h.groups as [string, string];
    if (isGeneric(head) || out.some((o) => h.start < o.end && o.start < h.end)) continue;
    out.push({
      start: h.start,
      end: h.groupSpans[0]!.end,
      kind: INTENT_SUFFIXES.has(suffix) ? 'intent' : 'interest',
      items: [`${head} ${suffix}`],
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

const INSTRUCTION =
  /^[\s\u0000]*(?:we|our|i|my|you|your|please|let's|this|it|promote|target|reach|sell|advertise|launch|run|drive|show|serve|find|get|build|create|increase|boost|grow|upsell|retarget|need|want)\b/i;

/**
 * The audience noun a brief opens with ("Runners aged 20-35", "New parents in
 * ..."), once everything else in that clause has been claimed. Generic
 * nouns ("people", "households") are not interests.
 */
export function headTopics(b: Brief, clauses: readonly Clause[]): { interests: string[]; intents: string[] } {
  // The noun phrase each audience clause opens with. A clause already read
  // whole ("Avoid gambling.") or one that opens with an instruction or a
  // pronoun ("Promote our app", "We sell ...") has none. A leading label
  // ("Target: ...") or "the audience is" is not part of it, nor is a
  // targeting verb ("Target parents ...").
  const heads: string[] = [];
  for (const c of clauses) {
    if (c.role !== 'audience') continue;
    // An instruction names its audience only after a targeting verb ("Target parents ...").
    if (c.imperative && !/^\W*(?:please\s+)?(?:target|reach|find)\b/i.test(b.slice(c))) continue;
    const text = b.caseView
      .slice(c.start, c.end)
      .replace(/^[\s\u0000]*(?:(?:the\s+)?(?:target\s+)?audience\s+(?:is|are)\s+|(?:target|reach|find)\s+(?=[a-z]))/i, '');
    const stop = text.search(
      /[,()]|\b(?:who|that|which|in|on|at|across|aged|with|from|within|around|near|based|living|between|but|excluding|except|looking|researching|shopping|planning|interested)\b/i,
    );
    const opening = stop < 0 ? text : text.slice(0, stop);
    if (opening.replace(/\u0000/g, '').trim() && !INSTRUCTION.test(opening)) heads.push(opening);
  }
  const interests: string[] = [];
  const intents: string[] = [];
  for (const chunk of [...heads, ...appositions(b, clauses)].flatMap((h) => h.split(MASK))) {
    for (const part of splitList(chunk)) {
      const phrase = tidy(part).replace(/^(?:and|or|of)\s+|\s+(?:and|or|of)$/gi, '');
      // Audience nouns are plural people nouns ("runners", "new parents"); a
      // lone adjective left over ("single", "expectant"), a singular noun
      // ("campaign") or a plural that names no people ("insurance issues")
      // is not an interest.
      if (!phrase || !meaningful(phrase) || !/(?:[^su]s|-goers)$/i.test(phrase) || !namesPeople(phrase)) continue;
      if (/\b(?:buyers|shoppers)$/i.test(phrase)) intents.push(phrase.toLowerCase());
      else interests.push(phrase.toLowerCase());
    }
  }
  return { interests: uniq(interests), intents: uniq(intents) };
}

// "18-30 year olds in Leeds, students and young professionals, who ...": a
// list of audience nouns set off by commas inside an audience clause names the
// audience just as the head noun does.
function appositions(b: Brief, clauses: readonly Clause[]): string[] {
  const out: string[] = [];
  for (const c of clauses.filter((x) => x.role === 'audience')) {
    const parts = b.caseView.slice(c.start, c.end).split(',');
    for (const part of parts.slice(1)) {
      const words = part.replace(/^\s*(?:ideally|mainly|especially|including|plus|and|or|also)\s+/i, '').trim();
      if (!words || words.includes(MASK) || !/^[a-z][a-z' -]*$/i.test(words)) continue;
      if (/\b(?:in|at|on|with|who|whose|aged|from|for|of|to|into|near|across|only|any|all)\b/i.test(words)) continue;
      out.push(words);
    }
  }
  return out;
}
