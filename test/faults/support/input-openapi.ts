/**
 * The operations of the served OpenAPI document, in the shape the fault tests need: every
 * operation with its parameters, body schema and documented responses. Tests iterate this,
 * never a route list of their own, so a new route is covered the day it is documented.
 */
export type JsonSchema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** The document's template, e.g. `/api/v1/campaigns/{id}`. */
  path: string;
  operationId: string;
  /** Needs a bearer token (the document's `security`). */
  bearer: boolean;
  params: Parameter[];
  body?: { contentType: string; schema: JsonSchema };
  responses: Record<string, { description: string }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** Inlines `$ref`s to components, so generators see plain schemas. */
export function resolveRefs(doc: OpenApiDocument, schema: unknown, seen: string[] = []): JsonSchema {
  if (!schema || typeof schema !== 'object') return schema as JsonSchema;
  if (Array.isArray(schema)) return schema.map((s) => resolveRefs(doc, s, seen)) as unknown as JsonSchema;
  const ref = (schema as { $ref?: string }).$ref;
  if (ref) {
    const name = ref.replace('#/components/schemas/', '');
    if (seen.includes(name)) return {};
    return resolveRefs(doc, doc.components?.schemas?.[name], [...seen, name]);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolveRefs(doc, v, seen)]));
}

export function operationsOf(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      const op = raw as {
        operationId: string;
        security?: unknown[];
        parameters?: Array<{ name: string; in: Parameter['in']; required?: boolean; schema: unknown }>;
        requestBody?: { content: Record<string, { schema: unknown }> };
        responses: Record<string, { description: string }>;
      };
      const content = op.requestBody ? Object.entries(op.requestBody.content)[0] : undefined;
      ops.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        bearer: (op.security ?? []).length > 0,
        params: (op.parameters ?? []).map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required === true,
          schema: resolveRefs(doc, p.schema),
        })),
        ...(content ? { body: { contentType: content[0], schema: resolveRefs(doc, content[1].schema) } } : {}),
        responses: op.responses,
      });
    }
  }
  return ops;
}

export const pathParams = (op: Operation) => op.params.filter((p) => p.in === 'path');

/** The staff surface is everything under /api/v1/internal/ (the specification's rule). */
export const isStaffSurface = (op: Operation) => op.path.startsWith('/api/v1/internal/');

export function fillPath(template: string, values: Record<string, string>, encode = true): string {
  return template.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`no value for path parameter ${name} of ${template}`);
    return encode ? encodeURIComponent(v) : v;
  });
}
