import { isUuid } from '../ids';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { CHAT_FAILURES } from '../net/chat-completions';
import type { ExtractionEngine } from './extraction-engine';
import { PersonaSchema } from './persona-schema';

export type Persona = z.infer<typeof PersonaSchema>;

/** How a persona was made: by the rules, or by a model (with the rules as fallback, and why they answered). */
export const GenerationSchema = z
  .looseObject({
    method: z.enum(['rules', 'model']),
    engineVersion: z.string(),
    durationMs: z.number(),
    jobId: z.string(),
    requestId: z.string(),
    fallback: z.object({ from: z.literal('model'), reason: z.enum(CHAT_FAILURES) }).optional(),
  })
  .meta({ id: 'PersonaGeneration' });
export type Generation = z.infer<typeof GenerationSchema>;

export const ExtractRequestSchema = z.strictObject({ nlBrief: z.string().min(3).max(10_000) }).meta({ id: 'PersonaExtractRequest' });

function toPersona(r: Record<string, unknown>): Persona {
  // Reading through the schema fills the spec's defaults for anything an older engine left out.
  return PersonaSchema.parse({
    id: r.id,
    version: r.version,
    name: r.name,
    nlDescription: r.nl_description,
    semanticCore: r.semantic_core,
    confidence: r.confidence,
    createdAt: (r.created_at as Date).toISOString(),
  });
}

/** `channels`: the requesting product's, which the persona keeps as its scope (see shared/access/resource-scope.ts). */
export async function createExtractionRequest(
  db: Knex,
  advertiserId: string,
  requestedBy: string,
  brief: string,
  channels: readonly string[],
): Promise<string> {
  const id = randomUUID();
  await db('persona_requests').insert({ id, advertiser_id: advertiserId, requested_by: requestedBy, brief, scope_channels: [...channels] });
  return id;
}

/**
 * The worker's side: extract the request's brief and store the persona (version 1). Running
 * twice for one request keeps the first persona.
 */
export async function runExtraction(
  db: Knex,
  engine: ExtractionEngine,
  requestId: string,
  jobId: string,
): Promise<{ personaId: string; generation: Generation }> {
  const request = await db('persona_requests').where({ id: requestId }).first();
  if (!request) throw new Error(`persona request ${requestId} does not exist`);
  if (request.persona_id) return { personaId: request.persona_id, generation: request.generation };
  const started = performance.now();
  const { persona: extracted, method, engineVersion, fallback } = await engine.extract(request.brief);
  const generation: Generation = {
    method,
    engineVersion,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    jobId,
    requestId,
    ...(fallback ? { fallback } : {}),
  };
  return db.transaction(async (trx) => {
    const inserted = await trx('personas')
      .insert({
        id: randomUUID(),
        advertiser_id: request.advertiser_id,
        request_id: requestId,
        name: extracted.name.slice(0, 200),
        nl_description: extracted.nlDescription,
        semantic_core: JSON.stringify(extracted.semanticCore),
        confidence: JSON.stringify(extracted.confidence),
        generation: JSON.stringify(generation),
        scope_channels: request.scope_channels,
      })
      .onConflict('request_id')
      .ignore()
      .returning('id');
    const personaId = inserted[0]?.id ?? (await trx('personas').where({ request_id: requestId }).first('id')).id;
    await trx('persona_requests')
      .where({ id: requestId })
      .update({ status: 'done', persona_id: personaId, generation: JSON.stringify(generation) });
    return { personaId, generation };
  });
}

export async function findPersona(db: Knex, advertiserId: string, id: string): Promise<(Persona & { generation: unknown }) | null> {
  if (!isUuid(id)) return null;
  const row = await db('personas').where({ id, advertiser_id: advertiserId }).first();
  return row ? { ...toPersona(row), generation: row.generation } : null;
}

/** The workspace's personas within the caller's channels (the same rule as `withinScope`). */
export async function listPersonas(db: Knex, advertiserId: string, channels: readonly string[], limit: number): Promise<Persona[]> {
  const rows = await db('personas')
    .where({ advertiser_id: advertiserId })
    .whereRaw('scope_channels <@ ?::text[]', [[...channels]])
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit);
  return rows.map(toPersona);
}
