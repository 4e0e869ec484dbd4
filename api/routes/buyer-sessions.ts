import {
  AppendMessageSchema,
  BuyerSessionEnvelope,
  CreateSessionSchema,
  appendMessage,
  createSession,
  readSession,
} from '../../shared/sessions/buyer-sessions';
import type { ApiDeps } from '../deps';
import { defineRoute } from '../http/route';
import { IdParams } from '../http/params';

export function buyerSessionRoutes({ db }: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/buyer/sessions',
      operationId: 'createBuyerSession',
      summary: 'Persist a buyer workflow and its scoped references. Grants no authority and starts no provider operation.',
      tags: ['buyer sessions'],
      access: 'bearer',
      scope: 'request',
      body: CreateSessionSchema,
      responses: {
        201: { description: 'The session.', schema: BuyerSessionEnvelope },
        404: { description: 'A context reference is not yours.' },
      },
      async handler({ principal, body }) {
        return { status: 201, body: { session: await createSession(db, principal, body) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/buyer/sessions/:id',
      operationId: 'getBuyerSession',
      summary: 'A buyer session.',
      tags: ['buyer sessions'],
      access: 'bearer',
      scope: { resource: 'buyer-session', param: 'id' },
      params: IdParams,
      responses: { 200: { description: 'The session.', schema: BuyerSessionEnvelope }, 404: { description: 'Not found.' } },
      async handler({ principal, params }) {
        return { status: 200, body: { session: await readSession(db, principal, params.id) } };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/buyer/sessions/:id/messages',
      operationId: 'appendBuyerSessionMessage',
      summary: 'Append a message (and history) at the current revision: at most 40 messages and 128 history entries.',
      tags: ['buyer sessions'],
      access: 'bearer',
      scope: { resource: 'buyer-session', param: 'id' },
      params: IdParams,
      body: AppendMessageSchema,
      responses: {
        200: { description: 'The session.', schema: BuyerSessionEnvelope },
        404: { description: 'Not found.' },
        409: { description: 'Stale revision, a full session, or a turn conflict.' },
      },
      async handler({ principal, params, body }) {
        return { status: 200, body: { session: await appendMessage(db, principal, params.id, body) } };
      },
    }),
  ];
}
