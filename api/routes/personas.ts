import { z } from 'zod';
import { notFound } from '../../shared/errors';
import { callerId } from '../../shared/auth/principal';
import { ExtractRequestSchema, GenerationSchema, findPersona, listPersonas } from '../../shared/personas/persona-store';
import { PersonaSchema } from '../../shared/personas/persona-schema';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { IdParams } from '../http/params';

const Envelope = z.object({ persona: PersonaSchema, generation: GenerationSchema }).meta({ id: 'PersonaExtraction' });

export function personaRoutes({ db, extractions }: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/personas/extract',
      operationId: 'extractPersona',
      summary:
        'Turn a natural-language brief into a structured audience persona (30 per minute per IP). Does not prove supplier availability.',
      tags: ['personas'],
      access: 'bearer',
      scope: 'caller',
      body: ExtractRequestSchema,
      responses: {
        200: { description: 'The persona and how it was generated.', schema: Envelope },
        503: { description: 'No extraction worker answered in time.' },
      },
      async handler({ principal, body }) {
        const { personaId, generation } = await extractions.extract(
          db,
          principal.advertiserId,
          callerId(principal),
          body.nlBrief,
          principal.channels,
        );
        const stored = await findPersona(db, principal.advertiserId, personaId);
        if (!stored) throw notFound();
        const { generation: _g, ...persona } = stored;
        void _g;
        return { status: 200, body: { persona, generation } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/personas',
      operationId: 'listPersonas',
      summary: "Your workspace's personas, newest first.",
      tags: ['personas'],
      access: 'bearer',
      scope: 'filtered',
      query: z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(50) }),
      responses: { 200: { description: 'Personas.', schema: z.object({ personas: z.array(PersonaSchema) }) } },
      async handler({ principal, query }) {
        return { status: 200, body: { personas: await listPersonas(db, principal.advertiserId, principal.channels, query.limit) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/personas/:id',
      operationId: 'getPersona',
      summary: 'A persona, with how it was generated.',
      tags: ['personas'],
      access: 'bearer',
      scope: { resource: 'persona', param: 'id' },
      params: IdParams,
      responses: { 200: { description: 'The persona and how it was generated.', schema: Envelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        const stored = await findPersona(db, principal.advertiserId, params.id);
        if (!stored) throw notFound();
        const { generation, ...persona } = stored;
        return { status: 200, body: { persona, generation } };
      },
    }),
  ];
}
