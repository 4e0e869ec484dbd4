import taxonomy from './taxonomy/iab-interests.json';

// The interest taxonomy (IAB Tech Lab Audience Taxonomy 1.1 interest branch,
// a subset checked against the published file; see the JSON's sourceFile,
// licence and note) and its
// alias index. Interests are normalised onto these nodes so that "the Six
// Nations", "rugby fans" and "who watch rugby union" all land on Rugby.

export interface InterestNode {
  key: string;
  /** Unique ID in the published taxonomy; null for our own refinements (not IAB). */
  iabId: string | null;
  name: string;
  parent: string | null;
  aliases: string[];
  /** British everyday label where the IAB name reads oddly here (Soccer -> Football). */
  label?: string;
  /** false: a published parent kept only to place children; its name is not read as an interest. */
  matchName?: boolean;
}

export const INTEREST_NODES: readonly InterestNode[] = taxonomy.nodes as InterestNode[];
const BY_KEY = new Map(INTEREST_NODES.map((n) => [n.key, n]));

/** Lower-case alias (words joined by single spaces) -> node. */
const ALIASES = new Map<string, InterestNode>();
for (const node of INTEREST_NODES) {
  if (node.matchName !== false) ALIASES.set(node.name.toLowerCase(), node);
  for (const a of node.aliases) ALIASES.set(a.toLowerCase(), node);
}
export const LONGEST_ALIAS_WORDS = Math.max(...[...ALIASES.keys()].map((a) => a.split(' ').length));

// Whitespace that normalising would change: a run, a tab or newline, an end.
const IRREGULAR_SPACE = /\s\s|[^\S ]|^\s|\s$/;

export function lookupAlias(words: string): InterestNode | undefined {
  const lower = words.toLowerCase();
  // Most callers pass already-spaced text; skip the rewrite for them.
  return ALIASES.get(IRREGULAR_SPACE.test(lower) ? lower.replace(/\s+/g, ' ').trim() : lower);
}

export function nodeByKey(key: string): InterestNode | undefined {
  return BY_KEY.get(key);
}

/** Every alias found inside a free-text phrase ("live football" -> Soccer), longest first, non-overlapping. */
export function nodesInPhrase(phrase: string): InterestNode[] {
  const words = phrase
    .toLowerCase()
    .split(/[^a-z0-9&'+-]+/)
    .filter(Boolean);
  const found: InterestNode[] = [];
  let i = 0;
  while (i < words.length) {
    let hit: { node: InterestNode; len: number } | null = null;
    for (let len = Math.min(LONGEST_ALIAS_WORDS, words.length - i); len >= 1; len--) {
      const node = lookupAlias(words.slice(i, i + len).join(' '));
      if (node) {
        hit = { node, len };
        break;
      }
    }
    if (hit) {
      found.push(hit.node);
      i += hit.len;
    } else i++;
  }
  return found;
}

/** The label an interest is reported under: the taxonomy's own name. */
export function interestLabel(node: InterestNode): string {
  return node.label ?? node.name;
}
