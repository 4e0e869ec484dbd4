import fc from 'fast-check';
import type { JsonSchema } from './input-openapi';

/**
 * fast-check arbitraries built from the OpenAPI document's JSON Schemas: values that satisfy
 * a schema (the valid shape), and the helpers mutations need to break one on purpose.
 * `realistic` maps property names to values that name real resources (seeded ids, digests),
 * so that valid-shaped requests get past lookups into the domain code behind them.
 */
export type Realistic = Record<string, unknown>;

const typesOf = (s: JsonSchema): string[] => (Array.isArray(s.type) ? (s.type as string[]) : s.type ? [s.type as string] : []);
const num = (v: unknown, fallback: number) => (typeof v === 'number' ? v : fallback);
const INT32 = 2 ** 31 - 1;

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  const min = num(s.minLength, 0);
  const max = Math.min(num(s.maxLength, min + 40), min + 40);
  switch (s.format) {
    case 'uuid':
      return fc.uuid();
    case 'date':
      return fc
        .date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10));
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'uri':
      return fc.webUrl();
  }
  if (typeof s.pattern === 'string') {
    const max = num(s.maxLength, Infinity);
    return fc.stringMatching(new RegExp(s.pattern as string)).filter((v) => v.length >= min && v.length <= max);
  }
  return fc.oneof(fc.string({ minLength: min, maxLength: max }), fc.string({ unit: 'grapheme', minLength: min, maxLength: max }));
}

function integerArb(s: JsonSchema): fc.Arbitrary<number> {
  const lo = Math.max(num(s.minimum, -INT32), -Number.MAX_SAFE_INTEGER);
  const hi = Math.min(num(s.maximum, INT32), Number.MAX_SAFE_INTEGER);
  const inner = fc.integer({ min: Math.max(lo, -INT32), max: Math.max(Math.min(hi, INT32), Math.max(lo, -INT32)) });
  return fc.oneof(inner, fc.constantFrom(lo, hi));
}

/** A value that satisfies the schema. */
export function validArb(s: JsonSchema, realistic: Realistic = {}, depth = 0): fc.Arbitrary<unknown> {
  if (!s || typeof s !== 'object') return fc.jsonValue({ maxDepth: 2 });
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if ('const' in s) return fc.constant(s.const);
  const alternatives = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (alternatives) return fc.oneof(...alternatives.map((a) => validArb(a, realistic, depth)));
  const types = typesOf(s);
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  if (types.length > 1) return fc.oneof(...types.map((t) => validArb({ ...s, type: t }, realistic, depth)));
  switch (types[0]) {
    case 'string':
      return stringArb(s);
    case 'integer':
      return integerArb(s);
    case 'number':
      return fc.double({ min: num(s.minimum, -1e9), max: num(s.maximum, 1e9), noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = num(s.minItems, 0);
      const max = Math.min(num(s.maxItems, min + 3), min + 3);
      return fc.array(validArb(s.items as JsonSchema, realistic, depth + 1), { minLength: min, maxLength: max });
    }
    case 'object':
      return objectArb(s, realistic, depth);
  }
  return fc.jsonValue({ maxDepth: 2 });
}

function objectArb(s: JsonSchema, realistic: Realistic, depth: number): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(props);
  if (names.length === 0) {
    if (s.additionalProperties === false) return fc.constant({});
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
  }
  const required = (s.required ?? []) as string[];
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of names) {
    const schemaValue = validArb(props[name]!, realistic, depth + 1);
    record[name] =
      name in realistic
        ? fc.oneof({ arbitrary: fc.constant(realistic[name]), weight: 3 }, { arbitrary: schemaValue, weight: 1 })
        : schemaValue;
  }
  return fc.record(record, { requiredKeys: required.filter((r) => names.includes(r)) });
}

function exampleString(s: JsonSchema): string {
  switch (s.format) {
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    case 'date':
      return '2099-03-01';
    case 'date-time':
      return '2099-03-01T00:00:00.000Z';
    case 'uri':
      return 'https://example.com/';
  }
  if (typeof s.pattern === 'string') return fc.sample(stringArb(s), { seed: 1, numRuns: 1 })[0]!;
  return 'fault suite example'.padEnd(num(s.minLength, 0), '.').slice(0, num(s.maxLength, 100));
}

/** One deterministic value that satisfies the schema, preferring realistic values. */
export function exampleOf(s: JsonSchema, realistic: Realistic = {}, name?: string): unknown {
  if (name && name in realistic) return realistic[name];
  if (Array.isArray(s.enum)) return s.enum[0];
  if ('const' in s) return s.const;
  const alternatives = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (alternatives) return exampleOf(alternatives[0]!, realistic);
  const type = typesOf(s)[0];
  switch (type) {
    case 'string':
      return exampleString(s);
    case 'integer':
    case 'number':
      return Math.max(num(s.minimum, 0), Math.min(1, num(s.maximum, 1)));
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: num(s.minItems, 0) }, () => exampleOf(s.items as JsonSchema, realistic));
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, JsonSchema>;
      const required = (s.required ?? []) as string[];
      // Optional properties are left out unless a realistic value names something real.
      const names = Object.keys(props).filter((k) => required.includes(k) || k in realistic);
      // A body of optional fields usually needs at least one of them.
      if (names.length === 0 && Object.keys(props).length > 0) names.push(Object.keys(props)[0]!);
      return Object.fromEntries(names.map((k) => [k, exampleOf(props[k] ?? {}, realistic, k)]));
    }
  }
  return {};
}

/** A JSON value of a type the schema does not allow. */
export function wrongTypeArb(s: JsonSchema): fc.Arbitrary<unknown> {
  const allowed = new Set(typesOf(s));
  if (Array.isArray(s.enum)) return fc.constantFrom('not-one-of-the-values', 12345, [], {});
  if (allowed.has('integer')) allowed.add('number');
  const candidates: Array<[string, fc.Arbitrary<unknown>]> = [
    ['string', fc.string({ maxLength: 8 })],
    ['number', fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n) || !allowed.has('integer'))],
    ['boolean', fc.boolean()],
    ['array', fc.array(fc.integer(), { maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.integer(), { maxKeys: 2 })],
    ['null', fc.constant(null)],
  ];
  // A fractional number breaks an integer; an integer alone still fits a number.
  if (allowed.has('integer') && !typesOf(s).includes('number')) candidates.push(['fraction', fc.constantFrom(1.5, -0.25, 1e-7)]);
  const usable = candidates.filter(([t]) => !allowed.has(t)).map(([, a]) => a);
  return fc.oneof(...usable);
}

/** Properties that have a declared, checked type (not free-form `{}`). */
export function typedProperties(s: JsonSchema): string[] {
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  return Object.keys(props).filter((k) => typesOf(props[k]!).length > 0 || Array.isArray(props[k]!.enum));
}

export const stringProperties = (s: JsonSchema): string[] =>
  Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)
    .filter(([, p]) => typesOf(p).includes('string') && !Array.isArray(p.enum) && p.format === undefined && p.pattern === undefined)
    .map(([k]) => k);

/** `[[[…]]]` or `{"a":{"a":…}}`, `depth` levels deep, as JSON text (never built as an object). */
export const deepJson = (depth: number, kind: 'array' | 'object') =>
  kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
