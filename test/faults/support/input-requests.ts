import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { RawRequest } from './input-http';
import { fillPath, type JsonSchema, type Operation, type Parameter } from './input-openapi';
import { deepJson, stringProperties, typedProperties, validArb, wrongTypeArb, type Realistic } from './input-arbitraries';

/**
 * Requests planned from one operation of the OpenAPI document. Mutations are invalid by
 * construction (each breaks one rule the document or the HTTP layer states); valid-shaped
 * requests satisfy the document and may or may not name something that exists.
 * Large bodies are built when sent, not when planned, so planning 10,000 stays cheap.
 */
export interface Planned {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: () => Buffer | string;
}

export interface PlanContext {
  /** Seeded values for the operation's path parameters. */
  pathValues: Record<string, string>;
  /** Authorization header value for the operation, or none. */
  auth?: string;
  /** A second caller for valid-shaped requests (a delegated agent), where the operation allows it. */
  altAuth?: string;
  realistic: Realistic;
}

const MIB = 1024 * 1024;
const JSON_TYPE = 'application/json';
const params = (op: Operation, where: Parameter['in']) => op.params.filter((p) => p.in === where);
const isJsonBody = (op: Operation) => op.body?.contentType === JSON_TYPE;

function request(op: Operation, ctx: PlanContext, kind: string, over: Partial<Planned> & { query?: string } = {}): Planned {
  const { query, ...rest } = over;
  return {
    kind,
    method: op.method,
    path: fillPath(op.path, ctx.pathValues) + (query ? `?${query}` : ''),
    headers: { ...(ctx.auth ? { authorization: ctx.auth } : {}), ...(over.headers ?? {}) },
    ...(rest.body ? { body: rest.body } : {}),
    ...(rest.path ? { path: rest.path } : {}),
  };
}

const jsonBody = (value: unknown, splice?: [string, string | Buffer]) => () => {
  const text = JSON.stringify(value);
  if (!splice) return text;
  const [placeholder, raw] = splice;
  const at = text.indexOf(JSON.stringify(placeholder));
  if (at < 0) return text;
  const before = text.slice(0, at);
  const after = text.slice(at + JSON.stringify(placeholder).length);
  return typeof raw === 'string' ? before + raw + after : Buffer.concat([Buffer.from(before), raw, Buffer.from(after)]);
};

const withJson = (body: () => Buffer | string, type = JSON_TYPE) => ({ headers: { 'content-type': type }, body });
const PLACEHOLDER = '__fault_placeholder__';
const validBody = (op: Operation, ctx: PlanContext) =>
  validArb(op.body!.schema, ctx.realistic).map(
    (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {}) as Record<string, unknown>,
  );

/** Every way this operation's request can be made invalid, as arbitraries of planned requests. */
export function mutationArbs(op: Operation, ctx: PlanContext): fc.Arbitrary<Planned>[] {
  const arbs: fc.Arbitrary<Planned>[] = [];
  const schema = op.body?.schema ?? {};
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const strict = schema.additionalProperties === false;
  // The rest of the request is valid, so the one broken rule is what is refused.
  const base = isJsonBody(op) ? validBody(op, ctx) : fc.constant(null);
  const baseBody = (b: Record<string, unknown> | null) => (b ? withJson(jsonBody(b)) : {});

  for (const p of params(op, 'path')) {
    const seeded = ctx.pathValues[p.name]!;
    const at = (raw: string) => fillPath(op.path, { ...ctx.pathValues, [p.name]: raw }, false);
    const encoded = (v: string) => at(encodeURIComponent(v));
    const max = typeof p.schema.maxLength === 'number' ? p.schema.maxLength : undefined;
    if (max !== undefined)
      arbs.push(
        fc
          .tuple(base, fc.integer({ min: 1, max: 40 }))
          .map(([b, extra]) => ({ ...request(op, ctx, 'path too long', baseBody(b)), path: encoded('x'.repeat(max + extra)) })),
      );
    if (p.schema.format === 'uuid')
      arbs.push(
        fc
          .tuple(base, fc.string({ minLength: 1, maxLength: 30 }))
          .map(([b, s]) => ({ ...request(op, ctx, 'path not a uuid', baseBody(b)), path: encoded(`not-a-uuid-${s}`) })),
      );
    arbs.push(base.map((b) => ({ ...request(op, ctx, 'path NUL byte', baseBody(b)), path: at(`${encodeURIComponent(seeded)}%00`) })));
    arbs.push(
      fc.tuple(base, fc.constantFrom('%FF', '%C3%28', '%E0%A4%A', '%', '%zz', '%ED%A0%80')).map(([b, bad]) => ({
        ...request(op, ctx, 'path bad UTF-8 / percent-encoding', baseBody(b)),
        path: at(`${encodeURIComponent(seeded)}${bad}`),
      })),
    );
  }

  // Larger than Node's request-head limit (16 KiB): the server refuses it before express sees it.
  arbs.push(
    fc
      .integer({ min: 17 * 1024, max: 64 * 1024 })
      .map((n) => request(op, ctx, 'oversized request head', { query: `fault=${'x'.repeat(n)}` })),
  );
  const query = params(op, 'query');
  arbs.push(
    fc
      .tuple(base, fc.string({ minLength: 1, maxLength: 10 }))
      .map(([b, v]) => request(op, ctx, 'unknown query parameter', { ...baseBody(b), query: `fault_${encodeURIComponent(v)}=1` })),
  );
  for (const q of query) {
    const s = q.schema;
    const bad: string[] = [];
    if (s.type === 'integer') bad.push('abc', '1.5', String(Number(s.minimum ?? 1) - 1), '%FF', '1e400');
    if (typeof s.maximum === 'number') bad.push(String(s.maximum + 1));
    if (Array.isArray(s.enum)) bad.push('not-an-option');
    if (typeof s.maxLength === 'number') bad.push('x'.repeat(s.maxLength + 1));
    bad.push(`${encodeURIComponent(String(s.default ?? 'a'))}&${q.name}=${encodeURIComponent(String(s.default ?? 'b'))}`);
    arbs.push(
      fc
        .tuple(base, fc.constantFrom(...bad))
        .map(([b, v]) => request(op, ctx, `bad query ${q.name}`, { ...baseBody(b), query: `${q.name}=${v}` })),
    );
  }

  for (const h of params(op, 'header')) {
    const bad: string[] = [];
    if (typeof h.schema.minLength === 'number' && h.schema.minLength > 1) bad.push('x'.repeat(h.schema.minLength - 1));
    if (typeof h.schema.maxLength === 'number') bad.push('x'.repeat(h.schema.maxLength + 1));
    if (bad.length)
      arbs.push(
        fc.tuple(base, fc.constantFrom(...bad)).map(([b, v]) =>
          request(op, ctx, `bad header ${h.name}`, {
            ...baseBody(b),
            headers: { ...(b ? { 'content-type': JSON_TYPE } : {}), [h.name]: v },
          }),
        ),
      );
  }

  if (!op.body) {
    arbs.push(
      fc
        .oneof(
          fc.constant('{}'),
          fc.constant(deepJson(10_000, 'array')),
          fc.jsonValue().map((v) => JSON.stringify(v) ?? '1'),
        )
        .map((text) =>
          request(
            op,
            ctx,
            'body on an operation that takes none',
            withJson(() => text),
          ),
        ),
    );
    return arbs;
  }

  if (!isJsonBody(op)) {
    // A raw upload: random bytes never carry an accepted file signature.
    const types = fc.constantFrom<string | undefined>(op.body.contentType, undefined, 'text/plain', JSON_TYPE, 'image/png', 'video/mp4');
    arbs.push(
      fc.tuple(types, fc.integer({ min: 1, max: 4096 })).map(([type, n]) =>
        request(op, ctx, 'upload bytes of no accepted type', {
          headers: type ? { 'content-type': type } : {},
          body: () => randomBytes(n),
        }),
      ),
    );
    arbs.push(
      fc.integer({ min: MIB + 1024, max: 5 * MIB }).map((n) =>
        request(op, ctx, 'huge upload of no accepted type', {
          headers: { 'content-type': op.body!.contentType },
          body: () => randomBytes(n),
        }),
      ),
    );
    return arbs;
  }

  const jb = validBody(op, ctx);
  const typed = typedProperties(schema);
  if (typed.length)
    arbs.push(
      fc
        .tuple(jb, fc.constantFrom(...typed))
        .chain(([b, name]) =>
          wrongTypeArb(props[name]!).map((wrong) => request(op, ctx, 'wrong type', withJson(jsonBody({ ...b, [name]: wrong })))),
        ),
    );
  if (strict)
    arbs.push(
      fc
        .tuple(jb, fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }))
        .map(([b, k, v]) => request(op, ctx, 'extra field', withJson(jsonBody({ ...b, [`fault_${k}`]: v })))),
    );
  const required = ((schema.required ?? []) as string[]).filter((r) => r in props);
  if (required.length)
    arbs.push(
      fc.tuple(jb, fc.constantFrom(...required)).map(([b, name]) => {
        const { [name]: _dropped, ...rest } = b;
        void _dropped;
        return request(op, ctx, 'missing required field', withJson(jsonBody(rest)));
      }),
    );
  arbs.push(
    fc
      .oneof(
        fc.constant('[]'),
        fc.constant('"a string"'),
        fc.constant('42'),
        fc.constant('true'),
        fc.array(fc.integer(), { minLength: 1, maxLength: 3 }).map((a) => JSON.stringify(a)),
      )
      .map((text) =>
        request(
          op,
          ctx,
          'body of the wrong JSON type',
          withJson(() => text),
        ),
      ),
  );
  const strings = stringProperties(schema);
  // Above every JSON body limit (1 MiB by default, 16 KiB for the pixel): 413.
  arbs.push(
    fc
      .tuple(
        jb,
        fc.integer({ min: MIB + 1024, max: 5 * MIB }),
        fc.option(fc.constantFrom(...(strings.length ? strings : ['fault_pad'])), { nil: undefined }),
      )
      .map(([b, size, name]) =>
        request(
          op,
          ctx,
          'huge string',
          withJson(jsonBody({ ...b, [name ?? strings[0] ?? 'fault_pad']: PLACEHOLDER }, [PLACEHOLDER, `"${'x'.repeat(size)}"`])),
        ),
      ),
  );
  // Deep nesting where no nesting is allowed: a typed property, an unknown key, or the root.
  const deepSpot = typed[0] ?? (strict ? 'fault_deep' : undefined);
  arbs.push(
    fc
      .tuple(jb, fc.integer({ min: 10_000, max: 20_000 }), fc.constantFrom<'array' | 'object'>('array', 'object'))
      .map(([b, depth, kind]) =>
        request(
          op,
          ctx,
          'deep nesting',
          withJson(
            deepSpot && !(kind === 'object' && props[deepSpot]?.type === 'object')
              ? jsonBody({ ...b, [deepSpot]: PLACEHOLDER }, [PLACEHOLDER, deepJson(depth, kind)])
              : () => deepJson(depth, 'array'),
          ),
        ),
      ),
  );
  arbs.push(
    fc.tuple(jb, fc.constantFrom([0xff], [0xc3, 0x28], [0xe0, 0x80], [0xed, 0xa0, 0x80], [0xfe, 0xff])).map(([b, bytes]) =>
      request(
        op,
        ctx,
        'bad UTF-8 outside strings',
        withJson(() => Buffer.concat([Buffer.from(bytes), Buffer.from(JSON.stringify(b))])),
      ),
    ),
  );
  arbs.push(
    fc
      .tuple(
        base,
        fc.constantFrom<string | undefined>(
          undefined,
          'application/xml',
          'text/html',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=fault',
          'image/png',
          'application/json; charset=koi8-r',
        ),
      )
      .map(([b, type]) =>
        request(op, ctx, 'wrong or missing content type', { headers: type ? { 'content-type': type } : {}, body: jsonBody(b) }),
      ),
  );
  arbs.push(
    fc.tuple(jb, fc.constantFrom('gzip', 'deflate', 'br', 'x-fault')).map(([b, enc]) =>
      request(op, ctx, `content-encoding ${enc} over plain JSON`, {
        headers: { 'content-type': JSON_TYPE, 'content-encoding': enc },
        body: jsonBody(b),
      }),
    ),
  );
  arbs.push(
    fc
      .constantFrom(
        '{',
        '{"a":',
        "{'a':1}",
        '{a:1}',
        '[1,]',
        '{"a":1}}',
        'NaN',
        'undefined',
        '{"a":1,}',
        '{"a":"\\x"}',
        '\u0000',
        '{"a":"b\u0000"}',
      )
      .map((text) =>
        request(
          op,
          ctx,
          'invalid JSON',
          withJson(() => text),
        ),
      ),
  );
  if (strings.length)
    arbs.push(
      fc
        .tuple(jb, fc.constantFrom(...strings), fc.string({ maxLength: 8 }))
        .map(([b, name, s]) => request(op, ctx, 'NUL byte in a string', withJson(jsonBody({ ...b, [name]: `${s}\u0000${s}` })))),
    );
  return arbs;
}

/** Requests that satisfy the document, some with payloads at its edges (deep free-form JSON, bad UTF-8 inside strings). */
export function validShapedArb(op: Operation, ctx: PlanContext): fc.Arbitrary<Planned> {
  const pathValues = fc.record(
    Object.fromEntries(
      params(op, 'path').map((p) => [
        p.name,
        fc.oneof({ arbitrary: fc.constant(ctx.pathValues[p.name]!), weight: 6 }, { arbitrary: validArb(p.schema).map(String), weight: 1 }),
      ]),
    ),
  );
  const query = fc.record(Object.fromEntries(params(op, 'query').map((q) => [q.name, validArb(q.schema).map(String)])), {
    requiredKeys: [],
  });
  const headers = fc.record(Object.fromEntries(params(op, 'header').map((h) => [h.name, headerValueArb(h.schema)])), { requiredKeys: [] });
  const auth = fc.oneof({ arbitrary: fc.constant(ctx.auth), weight: 6 }, { arbitrary: fc.constant(ctx.altAuth ?? ctx.auth), weight: 1 });
  const body: fc.Arbitrary<{ kind: string; headers: Record<string, string>; body?: () => Buffer | string }> = !op.body
    ? fc.constant({ kind: 'valid shape', headers: {} })
    : !isJsonBody(op)
      ? fc
          .constantFrom<[string, Buffer]>(
            ['image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
            [op.body.contentType, Buffer.alloc(0)],
          )
          .map(([type, magic]) => ({
            kind: 'valid shape',
            headers: { 'content-type': type },
            body: () => Buffer.concat([magic, randomBytes(64)]),
          }))
      : edgeBodies(op, ctx);
  return fc.tuple(pathValues, query, headers, auth, body).map(([pv, q, h, a, b]) => {
    const qs = new URLSearchParams(q as Record<string, string>).toString();
    return {
      kind: b.kind,
      method: op.method,
      path: fillPath(op.path, pv as Record<string, string>) + (qs ? `?${qs}` : ''),
      headers: { ...(a ? { authorization: a } : {}), ...(h as Record<string, string>), ...b.headers },
      ...(b.body ? { body: b.body } : {}),
    };
  });
}

function edgeBodies(op: Operation, ctx: PlanContext) {
  const schema = op.body!.schema;
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const freeForm = Object.keys(props).filter(
    (k) => props[k]!.type === 'object' && !props[k]!.properties && props[k]!.additionalProperties !== false,
  );
  const strings = stringProperties(schema);
  const plain = validBody(op, ctx).map((b) => ({ kind: 'valid shape', headers: { 'content-type': JSON_TYPE }, body: jsonBody(b) }));
  const variants: Array<{
    arbitrary: fc.Arbitrary<{ kind: string; headers: Record<string, string>; body?: () => Buffer | string }>;
    weight: number;
  }> = [{ arbitrary: plain, weight: 8 }];
  if (freeForm.length)
    variants.push({
      arbitrary: fc
        .tuple(validBody(op, ctx), fc.constantFrom(...freeForm), fc.integer({ min: 10_000, max: 20_000 }))
        .map(([b, name, depth]) => ({
          kind: 'deep nesting in a free-form object',
          headers: { 'content-type': JSON_TYPE },
          body: jsonBody({ ...b, [name]: PLACEHOLDER }, [PLACEHOLDER, `{"deep":${deepJson(depth, 'array')}}`]),
        })),
      weight: 1,
    });
  if (strings.length)
    variants.push({
      arbitrary: fc
        .tuple(
          validBody(op, ctx),
          fc.constantFrom(...strings),
          fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]),
        )
        .map(([b, name, bytes]) => ({
          kind: 'bad UTF-8 inside a string',
          headers: { 'content-type': JSON_TYPE },
          body: jsonBody({ ...b, [name]: PLACEHOLDER }, [
            PLACEHOLDER,
            Buffer.concat([Buffer.from('"ok'), Buffer.from(bytes), Buffer.from('ok"')]),
          ]),
        })),
      weight: 1,
    });
  return fc.oneof(...variants);
}

/** Header values are visible ASCII on the wire. */
const headerValueArb = (s: JsonSchema) =>
  fc.string({
    unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
    minLength: typeof s.minLength === 'number' ? s.minLength : 0,
    maxLength: typeof s.maxLength === 'number' ? Math.min(s.maxLength, 64) : 64,
  });

export const toRaw = (p: Planned): RawRequest => ({
  method: p.method,
  path: p.path,
  headers: p.headers,
  ...(p.body ? { body: p.body() } : {}),
});
