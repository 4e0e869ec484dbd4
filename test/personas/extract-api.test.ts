import { createTestEnv, json, type TestEnv } from '../support/api';
import { post } from '../support/bookings';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

interface Extraction {
  persona: {
    id: string;
    version: number;
    name: string;
    nlDescription: string;
    createdAt: string;
    confidence: Record<string, number>;
    semanticCore: {
      geo: { countries: string[]; cities: string[]; postcodeDistricts: string[]; tvRegions: string[] };
      demographics: { ageMin?: number; ageMax?: number; gender: string; incomeBand: string };
      firmographics: { sicCodes: string[]; seniority: string[]; companySize: string };
      interests: string[];
      intentTopics: string[];
      exclusions: string[];
      unresolvedConstraints?: string[];
      searchNegativeKeywords?: string[];
    };
  };
  generation: { method: string; engineVersion: string; durationMs: number; jobId: string };
}

describe('POST /api/v1/personas/extract', () => {
  test('a worker turns the brief into a stored persona (version 1) and says how it was made', async () => {
    const api = await env.api();
    const workers = await env.workers({ WORKER_QUEUES: 'persona-extract' });
    const token = await env.issuer.token({ org: 'org-p', user: 'planner' });
    const res = await post(api, token, '/api/v1/personas/extract', {
      nlBrief: 'Women aged 25-34 in Manchester and Leeds who are into yoga and wellness.',
    });
    expect(res.status).toBe(200);
    const { persona, generation } = await json<Extraction>(res);
    expect(persona.version).toBe(1);
    expect(persona.semanticCore.geo).toMatchObject({
      countries: ['GB'],
      cities: expect.arrayContaining(['Manchester', 'Leeds']),
      postcodeDistricts: [],
      tvRegions: [],
    });
    expect(persona.semanticCore.demographics).toMatchObject({ ageMin: 25, ageMax: 34, gender: 'female', incomeBand: 'any' });
    expect(persona.semanticCore.firmographics).toEqual({ sicCodes: [], seniority: [], companySize: 'any' });
    expect(persona.semanticCore.interests.join(' ')).toMatch(/yoga/);
    expect(persona.confidence['demographics.gender']).toBeGreaterThan(0);
    expect(generation).toMatchObject({
      method: 'rules',
      engineVersion: expect.any(String),
      jobId: expect.stringMatching(/^persona-extract-/),
    });
    // Stored and readable, tenant-scoped.
    const read = await api.fetch(`/api/v1/personas/${persona.id}`, { token });
    expect((await json<{ persona: { id: string } }>(read)).persona.id).toBe(persona.id);
    const list = await json<{ personas: Array<{ id: string }> }>(await api.fetch('/api/v1/personas', { token }));
    expect(list.personas.map((x) => x.id)).toContain(persona.id);
    const other = await env.issuer.token({ org: 'org-other' });
    expect((await api.fetch(`/api/v1/personas/${persona.id}`, { token: other })).status).toBe(404);
    expect((await json<{ personas: unknown[] }>(await api.fetch('/api/v1/personas', { token: other }))).personas).toEqual([]);
    await workers.close();
  });

  test('a brief that says nothing of a field leaves its default, and a B2B brief fills firmographics', async () => {
    const api = await env.api();
    const workers = await env.workers({ WORKER_QUEUES: 'persona-extract' });
    const token = await env.issuer.token({ org: 'org-p2' });
    const { persona } = await json<Extraction>(
      await post(api, token, '/api/v1/personas/extract', { nlBrief: 'CFOs at enterprise software companies in London.' }),
    );
    expect(persona.semanticCore.demographics).toEqual({ gender: 'any', incomeBand: 'any' });
    expect(persona.semanticCore.firmographics.seniority).toEqual(['c-suite']);
    expect(persona.semanticCore.firmographics.companySize).toBe('enterprise');
    expect(persona.semanticCore.firmographics.sicCodes.every((c) => ['58', '62'].includes(c.slice(0, 2)))).toBe(true);
    await workers.close();
  });

  test('with no worker running, the request times out cleanly with 503', async () => {
    const api = await env.api({ PERSONA_EXTRACT_TIMEOUT_MS: '300', REDIS_PREFIX: `${env.prefix}:noworker` });
    const token = await env.issuer.token({ org: 'org-p3' });
    const res = await post(api, token, '/api/v1/personas/extract', { nlBrief: 'Dads in Glasgow who watch football.' });
    expect(res.status).toBe(503);
    expect(await json(res)).toMatchObject({ code: 'extraction_unavailable', recovery: 'transient' });
    expect(await env.db('personas').where({ advertiser_id: 'org-p3' })).toHaveLength(0);
  });

  test.each([
    ['a brief under 3 characters', { nlBrief: 'hi' }],
    ['a missing brief', {}],
    ['a brief that is not a string', { nlBrief: 42 }],
    ['an unknown field', { nlBrief: 'Women in Leeds', channel: 'ctv' }],
  ])('%s is a 400 and creates nothing', async (_n, body) => {
    const api = await env.api();
    const token = await env.issuer.token({ org: 'org-p4' });
    const res = await post(api, token, '/api/v1/personas/extract', body);
    expect(res.status).toBe(400);
    expect(await env.db('persona_requests').where({ advertiser_id: 'org-p4' })).toHaveLength(0);
  });

  test('extraction is limited to 30 requests per window per IP, with its own headers', async () => {
    const api = await env.api({ REDIS_PREFIX: `${env.prefix}:limit`, PERSONA_EXTRACT_TIMEOUT_MS: '100' });
    const token = await env.issuer.token({ org: 'org-p5' });
    // Invalid bodies are cheap and still count.
    const results = await Promise.all(Array.from({ length: 31 }, () => post(api, token, '/api/v1/personas/extract', {})));
    expect(results.filter((r) => r.status === 429)).toHaveLength(1);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.headers.get('x-ratelimit-limit')).toBe('30');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
