import winkNLP from 'wink-nlp';
import model from 'wink-eng-lite-web-model';
interface Span {
  start: number;
  end: number;
}

// The brief's grammar, read by wink-nlp with its bundled English model (no
// download at run time). The model is loaded once per process, on first use,
// and kept: loading costs ~100 ms and ~30 MB, reading a brief well under 1 ms.

export interface Token extends Span {
  value: string;
  lower: string;
  lemma: string;
  pos: string;
  /** Inside the scope of a negation ("never", "not", "don't"). */
  negated: boolean;
  sentence: number;
}

export interface Chunk extends Span {
  /** Token indexes [from, to). */
  from: number;
  to: number;
}

export interface Analysis {
  tokens: Token[];
  /** Noun phrases: optional determiner/adjectives/numbers, then nouns or proper nouns. */
  chunks: Chunk[];
}

type Nlp = ReturnType<typeof winkNLP>;
let nlp: Nlp | null = null;
let loadMs = 0;

function engine(): Nlp {
  if (!nlp) {
    const t0 = performance.now();
    nlp = winkNLP(model);
    loadMs = performance.now() - t0;
  }
  return nlp;
}

/** Load the model now (workers call this at start so the first brief is not slow). */
export function warmNlp(): { loadMs: number } {
  engine();
  return { loadMs };
}

export function analyse(text: string): Analysis {
  const n = engine();
  const its = n.its;
  const doc = n.readDoc(text);
  const tokens: Token[] = [];
  let cursor = 0;
  doc.sentences().each((s, si) => {
    s.tokens().each((t: { out: (f: unknown) => unknown }) => {
      const value = t.out(its.value) as string;
      const at = text.indexOf(value, cursor);
      const start = at < 0 ? cursor : at;
      const end = at < 0 ? cursor : at + value.length;
      cursor = end;
      tokens.push({
        value,
        lower: value.toLowerCase(),
        lemma: (t.out(its.lemma) as string).toLowerCase(),
        pos: t.out(its.pos) as string,
        negated: Boolean(t.out(its.negationFlag)),
        sentence: si,
        start,
        end,
      });
    });
  });
  return { tokens, chunks: nounChunks(tokens) };
}

const NOMINAL = new Set(['NOUN', 'PROPN']);
const MODIFIER = new Set(['ADJ', 'NUM', 'NOUN', 'PROPN']);

function nounChunks(tokens: readonly Token[]): Chunk[] {
  const out: Chunk[] = [];
  let i = 0;
  while (i < tokens.length) {
    let j = i;
    while (j < tokens.length && (MODIFIER.has(tokens[j]!.pos) || (tokens[j]!.value === '-' && j > i))) j++;
    let last = j - 1;
    while (last >= i && !NOMINAL.has(tokens[last]!.pos)) last--;
    if (last >= i) {
      out.push({ from: i, to: last + 1, start: tokens[i]!.start, end: tokens[last]!.end });
      i = last + 1;
    } else i = Math.max(j, i + 1);
  }
  return out;
}
