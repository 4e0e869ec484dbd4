import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { z } from 'zod';
import { buildOpenApiDocument } from '../../api/http/openapi';
import { defineRoute } from '../../api/http/route';
import { ResponseChecker, type OpenApiDoc } from '../support/openapi-check';

/**
 * The suite checks every response of the real service against the document (test/support/api.ts).
 * Here a tiny app answers against its own document on purpose, to prove the check notices.
 */
const Thing = z.object({ id: z.uuid(), createdAt: z.iso.datetime() }).meta({ id: 'Thing' });
const route = defineRoute({
  method: 'get',
  path: '/things/:id',
  operationId: 'getThing',
  summary: 'A thing.',
  tags: ['test'],
  access: 'public',
  params: z.strictObject({ id: z.string() }),
  responses: { 200: { description: 'The thing.', schema: z.object({ thing: Thing }) } },
  async handler() {
    return { status: 200 };
  },
});
const checker = new ResponseChecker(buildOpenApiDocument([route], { defaultBodyLimitBytes: 1024 }) as unknown as OpenApiDoc);

const GOOD = { thing: { id: '6c1f0c9e-8d1e-4c44-9a39-5d3e3c1d2a10', createdAt: '2026-11-23T01:00:00.000Z' } };
const limitHeaders = { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '9', 'x-ratelimit-reset': '60', 'x-request-id': 'r-1' };

let server: http.Server;
let url: string;
beforeAll(async () => {
  const app = express();
  const answers: Record<string, (res: express.Response) => void> = {
    good: (res) => res.set(limitHeaders).json(GOOD),
    'wrong-type': (res) => res.set(limitHeaders).json({ thing: { ...GOOD.thing, id: 5 } }),
    'bad-format': (res) => res.set(limitHeaders).json({ thing: { ...GOOD.thing, createdAt: 'yesterday' } }),
    'undocumented-status': (res) => res.set(limitHeaders).status(418).json(GOOD),
    'no-rate-limit-headers': (res) => res.set({ 'x-request-id': 'r-2' }).json(GOOD),
    'header-not-integer': (res) => res.set({ ...limitHeaders, 'x-ratelimit-reset': 'soon' }).json(GOOD),
    'wrong-content-type': (res) => res.set(limitHeaders).type('text/plain').send('hello'),
    'error-not-problem': (res) => res.set(limitHeaders).status(400).json({ message: 'bad' }),
  };
  app.get('/things/:id', (req, res) => answers[req.params.id]!(res));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const mismatchesOf = async (id: string) => checker.mismatches('GET', `/things/${id}`, await fetch(`${url}/things/${id}`));

describe('the response check', () => {
  test('passes a response that is what the document says', async () => {
    expect(await mismatchesOf('good')).toEqual([]);
  });

  test.each([
    ['wrong-type', /body does not match.*\/thing\/id/],
    ['bad-format', /body does not match.*\/thing\/createdAt.*format/],
    ['undocumented-status', /answered 418, which it does not document/],
    ['no-rate-limit-headers', /header x-ratelimit-limit is missing/],
    ['header-not-integer', /header x-ratelimit-reset=soon/],
    ['wrong-content-type', /content-type text\/plain is not one of application\/json/],
    ['error-not-problem', /content-type application\/json is not one of application\/problem\+json/],
  ])('fails a response with %s', async (id, message) => {
    const problems = await mismatchesOf(id);
    expect(problems.join('\n')).toMatch(message);
    await expect(checker.check('GET', `/things/${id}`, await fetch(`${url}/things/${id}`))).rejects.toThrow(
      /disagrees with the OpenAPI document/,
    );
  });

  test('leaves paths the document does not describe alone', async () => {
    expect(checker.operationFor('GET', '/mcp')).toBeUndefined();
    expect(checker.operationFor('GET', '/things/a/b')).toBeUndefined();
    expect(checker.operationFor('GET', '/things/a?x=1')).toMatchObject({ template: '/things/{id}' });
  });
});
