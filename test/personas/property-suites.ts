import fc from 'fast-check';
import { positiveEntries } from './evaluate';
import { extractPersona } from '../../shared/personas/extractor';
import { SemanticCore } from '../../shared/personas/persona-schema';
import {
  AGE_ROOM_AUDIENCES,
  ASKS,
  AUDIENCES,
  CATEGORIES,
  EXCLUDED_PLACES,
  FREE_SENTENCES,
  HELD_ASKS,
  NEGATION_INLINE,
  NEGATION_LISTS,
  NEGATION_SENTENCES,
  OVER_SENTENCES,
  PLACE_INLINE,
  PLACE_SENTENCES,
  PROSE_KINDS,
  Surface,
  UNDER_INLINE,
  UNDER_SENTENCES,
  proseSentence,
} from './property-pools';

// Properties of persona extraction checked over generated briefs (the jest
// suite properties.test.ts and `npm run eval:personas` both run these):
// 1. what a brief rules out (a category, a place, an age band), in any common
//    wording, is an exclusion and changes no targeting field;
// 2. sentences about the product, tone, budget, dates or creative change
//    nothing at all;
// 3. dayparting, placement and first-party asks are reported as unresolved and
//    change no targeting field; asks a field already holds ("any gender") are
//    not reported.
// Each suite draws its cases from a fixed seed, so a run is repeatable.

export const PROPERTY_SEED = 20261124;

export interface SuiteResult {
  name: string;
  cases: number;
  violations: number;
  seed: number;
  /** The first violating brief and why it violates. */
  firstViolation?: string;
}

interface Suite<T> {
  name: string;
  arbitrary: fc.Arbitrary<T>;
  brief(c: T): string;
  /** Null when the property holds for the case, else what is wrong. */
  check(c: T): string | null;
}

/** Every field that targets someone, as one comparable value. */
function targeting(sc: SemanticCore): unknown {
  const { geo, demographics, firmographics } = sc;
  return {
    geo: { ...geo },
    demographics: { ...demographics },
    firmographics: { ...firmographics },
    interests: sc.interests,
    intentTopics: sc.intentTopics,
  };
}

// Arrays are compared as sets and objects by key: order carries no meaning in a persona.
function canonical(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(canonical).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  if (x && typeof x === 'object')
    return Object.fromEntries(
      Object.entries(x)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, canonical(v)]),
    );
  return x;
}
const same = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
const has = (entries: readonly string[], word: string): boolean => entries.some((e) => e.toLowerCase().includes(word.toLowerCase()));
/** How a brief is read: the rules by default; another extractor's checked answer can be passed to runSuite. */
export type Reader = (brief: string) => SemanticCore;
const rules: Reader = (brief) => extractPersona(brief).semanticCore;
let read = rules;
const core = (brief: string): SemanticCore => read(brief);
const join = (parts: readonly string[]): string => parts.join(' ');

/** Place the ruling-out part around the audience sentence with prose beside it. */
interface Layout {
  audience: string;
  prose: string[];
  position: number;
}
const layout = fc.record({
  audience: fc.constantFrom(...AUDIENCES),
  prose: fc.array(
    fc.tuple(fc.nat(PROSE_KINDS - 1), fc.nat(20), fc.nat(20)).map(([k, a, b]) => proseSentence(k, a, b)),
    { maxLength: 2 },
  ),
  position: fc.nat(3),
});

/** The brief with `extra` (a sentence, or an inline tail starting with , or ;) placed in it, and the brief without it. */
function compose(l: Layout, extra: string): { full: string; base: string } {
  const base = [...l.prose];
  base.splice(l.position % (base.length + 1), 0, l.audience);
  const inline = /^[,;]/.test(extra);
  const full = inline
    ? base.map((p) => (p === l.audience ? `${l.audience.replace(/\.$/, '')}${extra}.` : p))
    : [...base.slice(0, l.position % (base.length + 2)), extra, ...base.slice(l.position % (base.length + 2))];
  return { full: join(full), base: join(base) };
}

function excludedWithoutTargeting(full: string, base: string, keys: readonly string[]): string | null {
  const sc = core(full);
  const ruledOut = [...sc.exclusions, ...(sc.searchNegativeKeywords ?? [])];
  const missing = keys.filter((k) => !has(ruledOut, k));
  if (missing.length) return `${missing.join(', ')} not in exclusions ${JSON.stringify(sc.exclusions)}`;
  const positive = positiveEntries(sc);
  const leaked = keys.filter((k) => has(positive, k));
  if (leaked.length) return `${leaked.join(', ')} became targeting: ${JSON.stringify(positive)}`;
  if (!same(targeting(sc), targeting(core(base))))
    return `targeting changed: ${JSON.stringify(targeting(sc))} vs ${JSON.stringify(targeting(core(base)))}`;
  return null;
}

type CategoryCase = Layout & { surfaces: Surface[]; form: number; inline: boolean; list: number };
const surface = fc.constantFrom(...Object.values(CATEGORIES)).chain((xs) => fc.constantFrom(...xs));

const categories: Suite<CategoryCase> = {
  name: 'excluded categories never become targeting',
  arbitrary: fc
    .record({
      surfaces: fc.uniqueArray(surface, { minLength: 1, maxLength: 3, selector: (x) => x.text }),
      form: fc.nat(40),
      inline: fc.boolean(),
      list: fc.nat(4),
    })
    .chain((r) => layout.map((l) => ({ ...l, ...r }))),
  brief: (c) => compose(c, categoryText(c)).full,
  check(c) {
    const { full, base } = compose(c, categoryText(c));
    return excludedWithoutTargeting(
      full,
      base,
      c.surfaces.flatMap((x) => x.keys),
    );
  },
};

function categoryText(c: CategoryCase): string {
  const texts = c.surfaces.map((x) => x.text);
  if (texts.length > 1) return NEGATION_LISTS[c.list % NEGATION_LISTS.length]!(texts);
  const x = texts[0]!;
  if (c.inline) return NEGATION_INLINE[c.form % NEGATION_INLINE.length]!(x);
  const forms = x.includes(' ') ? NEGATION_SENTENCES : [...NEGATION_SENTENCES, ...FREE_SENTENCES];
  return forms[c.form % forms.length]!(x);
}

type PlaceCase = Layout & { place: string; form: number; inline: boolean };
const places: Suite<PlaceCase> = {
  name: 'excluded places never become targeting',
  arbitrary: fc
    .record({ place: fc.constantFrom(...EXCLUDED_PLACES), form: fc.nat(20), inline: fc.boolean() })
    .chain((r) => layout.map((l) => ({ ...l, ...r }))),
  brief: (c) => compose(c, placeText(c)).full,
  check(c) {
    const { full, base } = compose(c, placeText(c));
    return excludedWithoutTargeting(full, base, [c.place]);
  },
};
const placeText = (c: PlaceCase): string =>
  c.inline ? PLACE_INLINE[c.form % PLACE_INLINE.length]!(c.place) : PLACE_SENTENCES[c.form % PLACE_SENTENCES.length]!(c.place);

type AgeCase = { audience: string; bound: 'under' | 'over'; n: number; form: number; inline: boolean; prose: string[] };
const ages: Suite<AgeCase> = {
  name: 'excluded ages narrow the range and are never a target',
  arbitrary: fc
    .oneof(
      fc.record({ bound: fc.constant<'under' | 'over'>('under'), n: fc.constantFrom(18, 21, 25, 30) }),
      fc.record({ bound: fc.constant<'under' | 'over'>('over'), n: fc.constantFrom(60, 65, 70) }),
    )
    .chain((b) =>
      fc.record({
        audience: fc.constantFrom(...AGE_ROOM_AUDIENCES),
        bound: fc.constant(b.bound),
        n: fc.constant(b.n),
        form: fc.nat(20),
        inline: fc.boolean(),
        prose: fc.array(
          fc.tuple(fc.nat(PROSE_KINDS - 1), fc.nat(20), fc.nat(20)).map(([k, x, y]) => proseSentence(k, x, y)),
          { maxLength: 1 },
        ),
      }),
    ),
  brief: (c) => ageBrief(c).brief,
  check(c) {
    const { brief, keptMin, keptMax } = ageBrief(c);
    const sc = core(brief);
    const base = core(join([c.audience, ...c.prose]));
    const lo = base.demographics.ageMin;
    const hi = base.demographics.ageMax;
    const want =
      keptMin !== undefined ? { min: Math.max(lo ?? keptMin, keptMin), max: hi } : { min: lo, max: Math.min(hi ?? keptMax!, keptMax!) };
    const got = { min: sc.demographics.ageMin, max: sc.demographics.ageMax };
    if (got.min !== want.min || got.max !== want.max) return `ages ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`;
    const rest = (x: SemanticCore): unknown => ({ ...(targeting(x) as object), demographics: { ...x.demographics, ageMin: 0, ageMax: 0 } });
    return same(rest(sc), rest(base)) ? null : `other targeting changed: ${JSON.stringify(targeting(sc))}`;
  },
};
function ageBrief(c: AgeCase): { brief: string; keptMin?: number; keptMax?: number } {
  if (c.bound === 'over') {
    const { text, keptMax } = OVER_SENTENCES[c.form % OVER_SENTENCES.length]!(c.n);
    return { brief: join([c.audience, text, ...c.prose]), keptMax };
  }
  if (c.inline) {
    const tail = UNDER_INLINE[c.form % UNDER_INLINE.length]!(c.n);
    return { brief: join([`${c.audience.replace(/\.$/, '')}${tail}.`, ...c.prose]), keptMin: c.n };
  }
  const text = UNDER_SENTENCES[c.form % UNDER_SENTENCES.length]!(c.n);
  return { brief: join(c.form % 2 ? [c.audience, text, ...c.prose] : [text, c.audience, ...c.prose]), keptMin: c.n };
}

type ProseCase = { audience: string; prose: string[]; order: number[] };
const prose: Suite<ProseCase> = {
  name: 'product, tone, budget, dates and creative add nothing',
  arbitrary: fc.record({
    audience: fc.constantFrom(...AUDIENCES),
    prose: fc.array(
      fc.tuple(fc.nat(PROSE_KINDS - 1), fc.nat(20), fc.nat(20)).map(([k, a, b]) => proseSentence(k, a, b)),
      { minLength: 1, maxLength: 3 },
    ),
    order: fc.array(fc.nat(3), { minLength: 3, maxLength: 3 }),
  }),
  brief: proseBrief,
  check(c) {
    const full = core(proseBrief(c));
    const base = core(c.audience);
    return same(full, base) ? null : `persona changed: ${JSON.stringify(full)} vs ${JSON.stringify(base)}`;
  },
};
function proseBrief(c: ProseCase): string {
  const parts = [...c.prose];
  parts.splice(c.order[0]! % (parts.length + 1), 0, c.audience);
  return join(parts);
}

type AskCase = { audience: string; ask: number; held: number; before: boolean };
const asks: Suite<AskCase> = {
  name: 'unresolved holds audience and placement asks, not what a field holds',
  arbitrary: fc.record({
    audience: fc.constantFrom(...AUDIENCES),
    ask: fc.nat(ASKS.length - 1),
    held: fc.nat(HELD_ASKS.length - 1),
    before: fc.boolean(),
  }),
  brief: askBrief,
  check(c) {
    const base = core(c.audience);
    const held = core(c.before ? `${HELD_ASKS[c.held]} ${c.audience}` : `${c.audience} ${HELD_ASKS[c.held]}`);
    if (!same(held.unresolvedConstraints, base.unresolvedConstraints))
      return `"${HELD_ASKS[c.held]}" was reported: ${JSON.stringify(held.unresolvedConstraints)}`;
    const sc = core(askBrief(c));
    const ask = ASKS[c.ask]!;
    if (!has(sc.unresolvedConstraints ?? [], ask.key)) return `"${ask.text}" not reported: ${JSON.stringify(sc.unresolvedConstraints)}`;
    return same(targeting(sc), targeting(base)) ? null : `targeting changed: ${JSON.stringify(targeting(sc))}`;
  },
};
function askBrief(c: AskCase): string {
  const ask = ASKS[c.ask]!.text;
  return c.before ? `${ask} ${c.audience}` : `${c.audience} ${ask}`;
}

export const SUITES = [categories, places, ages, prose, asks] as const;

/** Run one suite over `numRuns` generated briefs from `seed`, counting every violation. */
export function runSuite<T>(suite: Suite<T>, numRuns: number, seed = PROPERTY_SEED, reader: Reader = rules): SuiteResult {
  const cases = fc.sample(suite.arbitrary, { seed, numRuns });
  let violations = 0;
  let firstViolation: string | undefined;
  read = reader;
  try {
    for (const c of cases) {
      const why = suite.check(c);
      if (why === null) continue;
      violations++;
      firstViolation ??= `${JSON.stringify(suite.brief(c))}: ${why}`;
    }
  } finally {
    read = rules;
  }
  return { name: suite.name, cases: cases.length, violations, seed, ...(firstViolation ? { firstViolation } : {}) };
}

/** Every suite; the seed can be overridden (PERSONA_PROPERTY_SEED) to explore other cases. */
export function runPropertySuites(numRuns = 300, seed = Number(process.env['PERSONA_PROPERTY_SEED'] ?? PROPERTY_SEED)): SuiteResult[] {
  return SUITES.map((s) => runSuite(s as Suite<unknown>, numRuns, seed));
}
