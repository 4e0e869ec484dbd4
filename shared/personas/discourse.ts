import { z } from 'zod';
import raw from './lexicon/discourse.json';
import { WordList, parseLexicon } from './lexicon/load';
import { hasTrailingCue, opensWithCue } from './negation';
import { Analysis, Token } from './nlp';
import { DAYPART } from './plan-asks';
import { Segment, segments } from './segments';
import { Span } from './text';
import { WORDS } from './lexicon/words';

// What each clause of a brief is about. Agency briefs mix the audience with
// the client, the product, the creative and the media plan ("We're launching
// an alcohol-free lager in April. Tone should be upbeat."); only clauses about
// the audience may give targeting. A clause's role comes from its label
// ("Tone: ..."), else from its grammatical subject and main verb ("we launch"
// is the product, "we want <people>" the audience, "ads should run" the plan),
// else from what a verbless fragment names. Anything unclear stays audience,
// so a plain one-line audience brief reads as before.

const Vocabulary = z.object({
  about: z.string(),
  labels: z.object({ audience: WordList, creative: WordList, plan: WordList, context: WordList, exclusion: WordList }),
  labelModifiers: WordList,
  briefNouns: WordList,
  greetings: WordList,
  fillers: WordList,
  verbs: z.object({ target: WordList, desire: WordList, context: WordList, plan: WordList, creative: WordList, negate: WordList }),
  nouns: z.object({
    creative: WordList,
    plan: WordList,
    product: WordList,
    daypart: WordList,
    people: WordList,
    notPeople: WordList,
    organisation: WordList,
  }),
  searchSignals: WordList,
  placementNouns: WordList,
});
const V = parseLexicon('discourse.json', Vocabulary, raw);

export type Role = 'audience' | 'exclusion' | 'context' | 'creative' | 'plan' | 'label';

/** Roles whose clauses never give targeting. */
export const NON_AUDIENCE: ReadonlySet<Role> = new Set(['context', 'creative', 'plan', 'label']);

export interface Clause extends Span {
  role: Role;
  /** Why the clause has its role (shown by explainExtraction). */
  why: string;
  /** The value of a label ("Exclude: a, b"): the whole clause is a list of its kind. */
  labelled: boolean;
  /** An advertiser subject of an audience clause ("Redline want ..."): not part of the audience. */
  advertiser?: Span;
  /** The clause opens with its verb ("Use a lookalike ...", "Target parents ..."). */
  imperative?: boolean;
}

const set = (xs: readonly string[]): ReadonlySet<string> => new Set(xs);
const LABELS = Object.entries(V.labels).map(([role, words]) => ({ role: role as Role, words: set(words) }));
const MODIFIERS = set(V.labelModifiers);
const GREETINGS = set(V.greetings);
const FILLERS = set(V.fillers);
const VERB = { target: set(V.verbs.target), desire: set(V.verbs.desire), context: set(V.verbs.context), plan: set(V.verbs.plan) };
const CREATIVE_VERBS = set(V.verbs.creative);
const NOUN = {
  creative: set(V.nouns.creative),
  plan: set(V.nouns.plan),
  product: set(V.nouns.product),
  daypart: set(V.nouns.daypart),
  people: set(V.nouns.people),
};
const BRIEF_FRAGMENT = new RegExp(
  `^(?:[\\w&'-]+\\s+){0,3}?(?:${V.briefNouns.join('|')})\\s+(?:for|from|on|re|about)\\b|^(?:for|from)\\s+[A-Z]`,
  'i',
);
const SEARCH = new RegExp(`\\b(?:${V.searchSignals.join('|')})\\b`, 'i');
const PLAN_SIGNAL =
  /[£$€]\s?\d|\b\d+(?:\.\d+)?\s?(?:k|m)\b|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|q[1-4]|h[12]|spring|summer|autumn|winter|half-term|christmas|easter|linkedin|youtube|tiktok|instagram|facebook|twitch|snapchat|pinterest|programmatic|bvod|ctv|dooh|ooh|radio|display|print|cinema|podcasts?|tv)\b/i;
const RELATIVE = set(['who', 'whose', 'which', 'that', 'whom']);
// Participles that modify an audience noun ("aged", "based"), never a main verb.
const PARTICIPLES = set(['aged', 'based', 'living', 'located', 'interested', 'working', 'employed', 'born', 'retired', 'married']);
const NEGATORS = set(['not', "n't", 'never']);
const CHAIN = set(['AUX', 'PART', 'VERB']);
const CHAIN_ADVERBS = set(WORDS.chainAdverbs);
// Plural agent nouns name people ("runners", "anglers"); a few common words only look like them.
const AGENT_PLURAL = /^[a-z][a-z-]*(?:ers|ors|ists|ians|s-goers)$/;
const NOT_PEOPLE = set(V.nouns.notPeople);
const ORGANISATION = set(V.nouns.organisation);
// Verbs of placing an ad: negated, they rule out where it may appear.
const PLACING = set(WORDS.placingVerbs);
// "over-55s", "16-24s", "18+": an age band names people; a bare number does not.
const AGE_WORD = /^(?:(?:over|under)-?\d{2}s|\d{2}-\d{2}s?|\d{2}s|\d{2}\+)$/;

const words = (s: string): string[] => s.toLowerCase().match(/[a-z0-9&'+-]+/g) ?? [];

/** The label a "Label: value" clause names, if the words before the colon are one. */
function labelRole(text: string): Role | null {
  const ws = words(text);
  while (ws.length > 1 && MODIFIERS.has(ws[0]!)) ws.shift();
  const phrase = ws.join(' ');
  for (const { role, words: list } of LABELS) if (list.has(phrase)) return role;
  return null;
}

function tokensIn(a: Analysis, s: Span): Token[] {
  return a.tokens.filter((t) => t.start >= s.start && t.end <= s.end && t.end > t.start);
}

function skipLead(ts: readonly Token[]): number {
  let i = 0;
  while (i < ts.length && (FILLERS.has(ts[i]!.lower) || GREETINGS.has(ts[i]!.lower) || ts[i]!.pos === 'PUNCT' || ts[i]!.pos === 'INTJ'))
    i++;
  return i;
}

// A capitalised word opening a sentence is read as a name and not lemmatised
// ("Families" stays "families"), so lookups also try a plain singular.
function forms(t: Token): string[] {
  const w = t.lower;
  const singular = w.endsWith('ies') ? `${w.slice(0, -3)}y` : w.endsWith('ss') ? w : w.replace(/s$/, '');
  return [t.lemma, w, singular];
}
const within = (s: ReadonlySet<string>, t: Token): boolean => forms(t).some((f) => s.has(f));

function isPeople(t: Token, i: number, atSentenceStart: boolean): boolean {
  if (within(NOUN.people, t) || AGE_WORD.test(t.lower)) return true;
  return (t.value === t.lower || (i === 0 && atSentenceStart)) && AGENT_PLURAL.test(t.lower) && !NOT_PEOPLE.has(t.lower);
}

/**
 * Some word of the span names people (or "who" describes them) or a placement:
 * the span can be an ask about the audience. Anything else (an offer, a
 * product, a date) is prose, whatever its nouns.
 */
export function asksAboutAudience(a: Analysis, s: Span): boolean {
  return tokensIn(a, s).some((t, i) => PERSON_WORDS.has(t.lower) || within(PLACEMENT, t) || isPeople(t, i, i === 0));
}
const PERSON_WORDS = set(WORDS.personWords);
const PLACEMENT = set(V.placementNouns);

/** The last word of a phrase is a people noun ("keen gardeners", "new parents", "cinema-goers"). */
export function namesPeople(phrase: string): boolean {
  const last = phrase.toLowerCase().split(/\s+/).pop() ?? '';
  const singular = last.endsWith('ies') ? `${last.slice(0, -3)}y` : last.replace(/s$/, '');
  return NOUN.people.has(last) || NOUN.people.has(singular) || (AGENT_PLURAL.test(last) && !NOT_PEOPLE.has(last)) || /-goers$/.test(last);
}

type SubjectKind = 'none' | 'advertiser' | 'creative' | 'plan' | 'product' | 'people' | 'other';

function subjectKind(ts: readonly Token[], atSentenceStart: boolean, isPlace: (s: string) => boolean): SubjectKind {
  if (!ts.length) return 'none';
  const lows = ts.map((t) => t.lower);
  const people = ts.some((t, i) => isPeople(t, i, atSentenceStart));
  // "Can you build a persona for us?": a request to the reader, not the audience.
  if (lows.includes('you')) return 'product';
  if (lows.some((w) => w === 'we' || w === 'i' || w === 'they' || w === 'us')) return 'advertiser';
  if (lows[0] === 'our' || lows[0] === 'my') return people ? 'people' : 'advertiser';
  if (people) return 'people';
  const has = (s: ReadonlySet<string>): boolean => ts.some((t) => within(s, t));
  if (has(NOUN.creative)) return 'creative';
  if (has(NOUN.plan) || has(NOUN.daypart)) return 'plan';
  if (has(NOUN.product)) return 'product';
  // A name that is not a place ("Northgate Motors", "Redline Energy Drinks") is
  // the advertiser; a capital that only opens the sentence is no name.
  const capitals = ts.filter((t, i) => /^[A-Z]/.test(t.value) && (i > 0 || !atSentenceStart));
  return capitals.length && !isPlace(capitals.map((t) => t.value).join(' ')) ? 'advertiser' : 'other';
}

const LEXICON_VERBS = new Set([
  ...V.verbs.target,
  ...V.verbs.desire,
  ...V.verbs.plan,
  ...V.verbs.context,
  ...V.verbs.creative,
  ...V.verbs.negate,
]);

const NOMINAL = new Set(['DET', 'ADJ', 'PROPN']);

/** Index of the main verb in ts, -1 for a fragment, -2 for a noun phrase with a relative clause. */
function mainVerb(ts: readonly Token[], from: number): number {
  // An instruction opens with its verb, which the tagger may read as a name ("Run Mon-Fri only").
  if (ts[from] && LEXICON_VERBS.has(ts[from]!.lower) && ts[from]!.pos !== 'NOUN') return from;
  for (let i = from; i < ts.length; i++) {
    const t = ts[i]!;
    if (RELATIVE.has(t.lower) && i > from) return -2;
    if (PARTICIPLES.has(t.lower)) continue;
    if (ts[i - 1]?.value === '-' || ts[i + 1]?.value === '-') continue;
    if (t.pos === 'AUX') return i;
    if (t.pos === 'VERB') {
      if (i === from && /^[A-Z]/.test(t.value) && ts[i + 1]?.pos === 'PROPN') continue;
      // Inside a noun phrase a "verb" is a noun ("the Spanish launch", "a new launch").
      if (NOMINAL.has(ts[i - 1]?.pos ?? '') && (ts[i - 1]!.pos !== 'PROPN' || ts[i - 2]?.pos === 'DET')) continue;
      return i;
    }
  }
  return -1;
}

interface VerbChain {
  lemma: string;
  negated: boolean;
  end: number;
}

/** The verb group from i ("don't want to reach", "'d like"): its content verb and negation. */
function verbChain(ts: readonly Token[], i: number): VerbChain {
  let lemma = ts[i]!.lemma;
  let negated = false;
  let j = i;
  for (; j < ts.length; j++) {
    const t = ts[j]!;
    const verbish = CHAIN.has(t.pos) || VERB.desire.has(t.lemma) || t.lower === 'to';
    if (!verbish && !CHAIN_ADVERBS.has(t.lower) && !NEGATORS.has(t.lower)) break;
    if (NEGATORS.has(t.lower) || NEGATORS.has(t.lemma)) negated = true;
    else if (t.pos === 'VERB' || VERB.desire.has(t.lemma)) lemma = t.lemma;
    else if (t.pos === 'AUX' && lemma === ts[i]!.lemma) lemma = t.lemma;
  }
  // Phrasal verbs the lists name whole: "go after", "look for".
  const next = ts[j]?.lower;
  if (next && VERB.target.has(`${lemma} ${next}`)) lemma = `${lemma} ${next}`;
  if (next && ts[j + 1] && VERB.target.has(`${lemma} ${next} ${ts[j + 1]!.lower}`)) lemma = `${lemma} ${next} ${ts[j + 1]!.lower}`;
  return { lemma, negated, end: j };
}

function objectKind(ts: readonly Token[], text: string): 'plan' | 'creative' | 'context' | 'other' {
  const head = ts.slice(0, 4);
  if (head.some((t) => /^(?:brief|persona|details|deck|notes|below|attached)$/.test(t.lower))) return 'context';
  if (head.some((t) => within(NOUN.creative, t))) return 'creative';
  const words = ts.length ? text.slice(ts[0]!.start, ts[Math.min(ts.length, 6) - 1]!.end) : '';
  if (head.some((t) => within(NOUN.plan, t) || within(NOUN.daypart, t)) || DAYPART.test(words)) return 'plan';
  return 'other';
}

interface Reading {
  role: Role;
  why: string;
  advertiser?: Span;
  imperative?: boolean;
}

export interface Probe {
  /** The words are a place the gazetteer knows. */
  isPlace(words: string): boolean;
}

// A label's value that names people, an age, a place or an exclusion is an
// audience even under a context label ("Quick brief: UK-wide, excluding London").
function namesAudience(text: string, s: Span, probe: Probe): boolean {
  // People words do not count: a product is often named for its buyers ("first-time buyer mortgage").
  const words = text.slice(s.start, s.end);
  if (AGES.test(words)) return true;
  return /\b(?:excluding|except|not|no|only)\b/i.test(words) || probe.isPlace(words);
}

// An age band written in a fragment ("Over 55s in ...", "16-24s", "18+").
const AGES = /\b(?:over|under|aged)[- ]?\d{2}|\b\d{2}\s*(?:-|to)\s*\d{2}\b|\b\d{2}\+|\b\d{2}s\b/i;

function fragmentRole(ts: readonly Token[], text: string, atSentenceStart: boolean, probe: Probe): Reading {
  const has = (s: ReadonlySet<string>): boolean => ts.some((t) => within(s, t));
  if (ts.some((t, i) => isPeople(t, i, atSentenceStart)) || AGES.test(text)) return { role: 'audience', why: 'names people or ages' };
  if (has(NOUN.daypart)) return { role: 'plan', why: 'names a time of day or week' };
  if (has(NOUN.creative)) return { role: 'creative', why: 'names the creative' };
  // "Pan-DACH, LinkedIn only": where a verbless line runs the ads is where the audience is.
  if (probe.isPlace(text)) return { role: 'audience', why: 'names a place' };
  if (has(NOUN.plan)) return { role: 'plan', why: 'names the media plan' };
  // "Kindred Vets Group", "Fitzroy Motors": a name alone is the client.
  const words = ts.filter((t) => /^\p{L}/u.test(t.value));
  if (words.length >= 2 && words.every((t) => /^\p{Lu}/u.test(t.value))) return { role: 'context', why: 'names the client' };
  if (PLAN_SIGNAL.test(text)) return { role: 'plan', why: 'names budget, dates or channels' };
  if (has(NOUN.product)) return { role: 'context', why: 'names the product' };
  return { role: 'audience', why: 'no other reading' };
}

function readClause(a: Analysis, text: string, s: Segment, sentenceStart: boolean, probe: Probe): Reading {
  const all = tokensIn(a, s);
  const from = skipLead(all);
  const ts = all.slice(from);
  const body = text.slice(ts[0]?.start ?? s.start, s.end);
  if (!ts.length) return { role: 'label', why: 'greeting or filler' };
  if (SEARCH.test(body)) return { role: 'audience', why: 'a search campaign names what people search for' };
  if (opensWithCue(body) || hasTrailingCue(body)) return { role: 'exclusion', why: 'rules something out' };
  const v = mainVerb(ts, 0);
  // "Brief for Pebble", "Campaign for Hale Mobility": a verbless line naming the client.
  if (v === -1 && BRIEF_FRAGMENT.test(body)) return { role: 'context', why: 'names the brief or client' };
  if (v === -2) return { role: 'audience', why: 'people described by a relative clause' };
  if (v === -1) return fragmentRole(ts, body, sentenceStart && from === 0, probe);
  const subject = ts.slice(0, v);
  const kind = subjectKind(subject, sentenceStart && from === 0, probe.isPlace);
  const chain = verbChain(ts, v);
  const object = ts.slice(chain.end);
  const targets = VERB.target.has(chain.lemma);
  const desires = VERB.desire.has(chain.lemma);
  const subjectSpan = subject.length ? { start: subject[0]!.start, end: subject[subject.length - 1]!.end } : undefined;
  if (kind === 'none' || kind === 'people' || kind === 'other') {
    if (chain.negated && (targets || desires || PLACING.has(chain.lemma)))
      return { role: 'exclusion', why: 'a negated targeting or placement verb' };
    if (kind === 'none' && objectKind(object, text) === 'context') return { role: 'label', why: 'an instruction about the brief itself' };
    if (kind === 'none' && !targets) {
      // An instruction is about what its object names ("keep the creative warm",
      // "weight the budget to weekends", "run weekday evenings only").
      const about = objectKind(object, text);
      if (about !== 'other') return { role: about, why: `an instruction about the ${about === 'context' ? 'brief' : about}` };
      if (VERB.plan.has(chain.lemma) && (!object.length || PLAN_SIGNAL.test(text.slice(object[0]!.start, s.end))))
        return { role: 'plan', why: `"${chain.lemma}" is about the media plan` };
    }
    // "Pebble is a Leeds-based retail company": a name described as an organisation is the advertiser.
    if (kind === 'other' && chain.lemma === 'be' && object.some((t) => within(ORGANISATION, t)))
      return { role: 'context', why: 'describes the advertiser' };
    return kind === 'none'
      ? { role: 'audience', why: 'an instruction about the audience', imperative: true }
      : { role: 'audience', why: kind === 'people' ? 'its subject is people' : 'no other reading' };
  }
  if (kind === 'advertiser') {
    if (chain.negated && (targets || desires || PLACING.has(chain.lemma)))
      return { role: 'exclusion', why: 'the advertiser says whom or what not to reach' };
    if (targets || (desires && objectKind(object, text) === 'other' && object.length && !/^(?:to|be)$/.test(object[0]!.lower)))
      return { role: 'audience', why: 'the advertiser names whom to reach', ...(subjectSpan ? { advertiser: subjectSpan } : {}) };
    if (VERB.plan.has(chain.lemma) || (desires && objectKind(object, text) === 'plan'))
      return { role: 'plan', why: 'the advertiser describes the plan' };
    if (CREATIVE_VERBS.has(chain.lemma)) return { role: 'creative', why: 'the advertiser describes the creative' };
    return { role: 'context', why: 'the advertiser describes itself or its product' };
  }
  const why = `its subject is the ${kind}`;
  return { role: kind === 'product' ? 'context' : kind, why };
}

/**
 * Every clause of the brief with its role. The value of a context label that
 * names an audience ("Quick brief: UK-wide, excluding London") is read as one.
 */
export function readClauses(text: string, a: Analysis, probe: Probe): Clause[] {
  const segs = segments(text);
  const out: Clause[] = [];
  let sentenceStart = true;
  segs.forEach((s, i) => {
    const next = segs[i + 1];
    const label = next && (next.join === 'colon' || next.join === 'dash') ? labelRole(text.slice(s.start, s.end)) : null;
    const previous = out[i - 1];
    let reading: Reading;
    let labelled = false;
    if (label) reading = { role: 'label', why: `a "${text.slice(s.start, s.end)}" label` };
    else if (previous?.role === 'label' && (s.join === 'colon' || s.join === 'dash') && previous.why.endsWith('label')) {
      const named = labelRole(text.slice(previous.start, previous.end))!;
      labelled = true;
      reading =
        named === 'context' && namesAudience(text, s, probe)
          ? readClause(a, text, s, false, probe)
          : { role: named, why: `the value of ${previous.why}` };
    } else reading = readClause(a, text, s, sentenceStart, probe);
    // A parenthesis takes the role of what it qualifies ("Hale Mobility
    // (stairlifts and scooters)" is the product), unless it steps out of an
    // audience clause to speak of the advertiser ("(we don't cover it)").
    // "No one under 21 - insurance issues", "(health data)": words added to an
    // exclusion that rule nothing out themselves explain it.
    const aside = (s.join === 'paren' || s.join === 'dash') && !labelled;
    if (aside && previous?.role === 'exclusion' && reading.role !== 'exclusion' && reading.why === 'no other reading')
      reading = { role: 'context', why: 'explains an exclusion' };
    else if (s.join === 'paren' && previous) {
      const own = reading.role;
      const hostAudience = previous.role === 'audience' || previous.role === 'exclusion';
      if (!(hostAudience && NON_AUDIENCE.has(own)))
        reading = { role: previous.role === 'label' ? own : previous.role, why: 'a parenthesis' };
    }
    out.push({
      start: s.start,
      end: s.end,
      role: reading.role,
      why: reading.why,
      labelled,
      ...(reading.advertiser ? { advertiser: reading.advertiser } : {}),
      ...(reading.imperative ? { imperative: true } : {}),
    });
    sentenceStart = /[.!?]\s*$/.test(text.slice(s.end, next?.start ?? text.length));
  });
  return out;
}
