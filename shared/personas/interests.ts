import { InterestNode, LONGEST_ALIAS_WORDS, interestLabel, lookupAlias, nodesInPhrase } from './interest-taxonomy';
import { Analysis, Token } from './nlp';
import { COMPANY_NOUNS } from './lexicon/industries';
import topics from './lexicon/topics.json';
import { Brief, Span } from './text';
import { WORDS } from './lexicon/words';

const PEOPLE_SUFFIXES: ReadonlySet<string> = new Set(topics.suffixes);

// Interests named indirectly: an event, league, club, brand, activity verb or
// agent noun that the taxonomy knows as an alias ("never miss the Six
// Nations" -> Rugby, "people who sail" -> Sailing). Read from the brief's
// tokens, so a word's part of speech and negation decide, not a trigger list.

export interface TaxonomyHit extends Span {
  node: InterestNode;
  surface: string;
}

// Words that are interests only as an activity verb without an object ("who
// run", "who sail or kayak") or inside a phrase already read as an interest.
const AMBIGUOUS: ReadonlySet<string> = new Set(WORDS.ambiguousInterests);
// "Never miss the Six Nations" is keen interest, not a negation.
const POSITIVE_AFTER_NEGATION = new Set(['miss', 'skip', 'forget']);
const OBJECT_START = new Set(['DET', 'NOUN', 'PROPN', 'ADJ', 'NUM', 'PRON']);

// wink marks negation scope to the end of its sentence, which can run past a
// clause ("No ads after 9pm. Keen gardeners ..." read as one). A token counts
// as negated only with a negator shortly before it and no clause break between.
const NEGATORS = new Set(['not', 'no', 'never', 'nothing', 'nobody', 'none', 'without', 'nor']);
const CLAUSE_BREAK = new Set(['.', ';', ':', '!', '?', '-', '(', ')']);

function negated(tokens: readonly Token[], i: number): boolean {
  if (!tokens[i]!.negated) return false;
  let negator = false;
  for (let k = i - 1; k >= Math.max(0, i - 8); k--) {
    const t = tokens[k]!;
    // A token may carry its full stop ("9pm." is read as one token).
    if (CLAUSE_BREAK.has(t.value) || /[.;:!?]$/.test(t.value)) break;
    if (POSITIVE_AFTER_NEGATION.has(t.lemma)) return false;
    if (NEGATORS.has(t.lemma) || NEGATORS.has(t.lower)) negator = true;
  }
  return negator && !POSITIVE_AFTER_NEGATION.has(tokens[i]!.lemma);
}

// "food and drink manufacturers", "travel companies": a sector before an
// organisation noun names an industry, not the audience's interest.
const ORGANISATIONS: ReadonlySet<string> = new Set(COMPANY_NOUNS);

function acceptable(tokens: readonly Token[], from: number, to: number, node: InterestNode, key: string): boolean {
  if (tokens[to] && ORGANISATIONS.has(tokens[to]!.lower)) return false;
  if (to - from > 1 || !AMBIGUOUS.has(key)) return true;
  const t = tokens[from]!;
  const next = tokens[to];
  // An activity verb with no object of its own: "people who sail", "who cycle to work".
  if (t.pos === 'VERB' || (t.pos === 'NOUN' && tokens[from - 1]?.lower === 'who')) return !next || !OBJECT_START.has(next.pos);
  // A head noun of a people phrase: "dog walkers", "wine lovers", "parents of".
  if (next && /^(?:lovers|fans|owners|walkers|enthusiasts|drinkers|goers|of)$/.test(next.lower)) return true;
  if (habitAdverbial(tokens, from)) return true;
  return node.key === 'parenting' && from === 0;
}

// "who potter about in the garden", "who commute by bike": the noun closes an
// adverbial of a relative clause describing what people do, so it names the
// activity rather than an object they own or a place they are.
function habitAdverbial(tokens: readonly Token[], at: number): boolean {
  const t = tokens[at]!;
  if (t.pos !== 'NOUN') return false;
  let k = at - 1;
  if (tokens[k] && tokens[k]!.pos === 'DET') k--;
  if (!tokens[k] || tokens[k]!.pos !== 'ADP') return false;
  for (let j = k - 1; j >= Math.max(0, at - 8); j--) {
    const w = tokens[j]!;
    if (CLAUSE_BREAK.has(w.value) || /[.;:!?]$/.test(w.value)) return false;
    if (w.lower === 'who') return true;
  }
  return false;
}

function lemmaKey(tokens: readonly Token[], from: number, to: number): string {
  let key = tokens[from]!.lemma;
  for (let k = from + 1; k < to; k++) key += ' ' + tokens[k]!.lemma;
  return key;
}

/**
 * Taxonomy aliases on free tokens of the brief. `multiWordOnly` is the early
 * pass that claims named events ("Cheltenham Festival", "Leeds Festival")
 * before geography can read a place out of them.
 */
export function findTaxonomyInterests(b: Brief, a: Analysis, multiWordOnly: boolean): TaxonomyHit[] {
  const { tokens } = a;
  const hits: TaxonomyHit[] = [];
  let i = 0;
  while (i < tokens.length) {
    let taken = 0;
    for (let len = Math.min(LONGEST_ALIAS_WORDS + 2, tokens.length - i); len >= (multiWordOnly ? 2 : 1); len--) {
      const from = i;
      const to = i + len;
      const span = { start: tokens[from]!.start, end: tokens[to - 1]!.end };
      if (!b.isFree(span)) continue;
      const surface = b.lower.slice(span.start, span.end);
      if (multiWordOnly && !/[\s-]/.test(surface)) continue;
      const node = lookupAlias(surface) ?? lookupAlias(lemmaKey(tokens, from, to));
      if (!node) continue;
      if (tokens.slice(from, to).some((_, k) => negated(tokens, from + k))) continue;
      if (!acceptable(tokens, from, to, node, surface)) continue;
      hits.push({ ...span, node, surface: b.text.slice(span.start, span.end) });
      b.claim(span);
      const shared = coordinatedHead(b, tokens, from, to);
      if (shared) hits.push(shared);
      taken = len;
      break;
    }
    i += Math.max(1, taken);
  }
  return hits;
}

// "Dog and cat owners", "cider and craft beer lovers": the people noun is
// shared, so the first word is read with it too.
function coordinatedHead(b: Brief, tokens: readonly Token[], from: number, to: number): TaxonomyHit | null {
  const conj = tokens[from - 1];
  const word = tokens[from - 2];
  const people = [tokens[to - 1], tokens[to]].find((t) => t && PEOPLE_SUFFIXES.has(t.lower));
  if (!people || !conj || !word || !/^(?:and|or|&)$/.test(conj.lower) || word.pos === 'PUNCT') return null;
  const span = { start: word.start, end: word.end };
  if (!b.isFree(span)) return null;
  const node = lookupAlias(`${word.lower} ${people.lower}`) ?? (AMBIGUOUS.has(word.lower) ? undefined : lookupAlias(word.lower));
  if (!node) return null;
  b.claim(span);
  return { ...span, node, surface: `${word.value} ${people.value}` };
}

/** Taxonomy labels for interest phrases other steps found ("live football" -> Football (Soccer)). */
export function labelsFor(phrases: readonly string[]): { labels: string[]; nodes: InterestNode[] } {
  const nodes = phrases.flatMap((p) => {
    const found = nodesInPhrase(p);
    return found.length || !/^[a-z]{3,}$/.test(p)
      ? found
      : gerunds(p)
          .flatMap((g) => nodesInPhrase(g))
          .slice(0, 1);
  });
  return { labels: nodes.map(interestLabel), nodes };
}

// An activity said as a bare verb ("who fish and hunt") is known by its -ing form.
function gerunds(verb: string): string[] {
  const stem = verb.replace(/e$/, '');
  return [`${verb}ing`, `${stem}ing`, `${verb}${verb.slice(-1)}ing`];
}
