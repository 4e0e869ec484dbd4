import { createHash, randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { loadConfig } from '../../shared/config/config';
import { post } from '../support/bookings';
import { DIGEST, STEP, actors, prepare, type Prepared } from '../agent/support';
import { campaignOf, measurementState, rowsJson, sendOutcomes, withoutRequestId } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const row = (date: string, market: string, value: number, metric = 'conversions') => ({ date, market, metric, value });

describe('POST /api/v1/campaigns/{id}/outcomes', () => {
  test('imports JSON rows as one audited batch, and a later row for the same day, market and metric replaces the earlier one', async () => {
    const human = await env.issuer.token({ org: 'org-out-1', user: 'analyst' });
    const campaignId = await campaignOf(api, human);
    const first = await sendOutcomes(api, human, campaignId, rowsJson([row('2026-01-01', 'london', 10), row('2026-01-01', 'anglia', 4)]));
    expect(first.status).toBe(201);
    const { batch } = await json<{ batch: Record<string, unknown> }>(first);
    expect(batch).toMatchObject({ campaignId, format: 'json', rowCount: 2, insertedCount: 2, replacedCount: 0, importedBy: 'analyst' });

    const csv = 'date,market,metric,value\n2026-01-01,london,conversions,12\n2026-01-02,london,revenueMinor,5000\n';
    const second = await sendOutcomes(api, human, campaignId, csv, 'text/csv; charset=utf-8');
    expect(second.status).toBe(201);
    expect((await json<{ batch: unknown }>(second)).batch).toMatchObject({
      format: 'csv',
      rowCount: 2,
      insertedCount: 1,
      replacedCount: 1,
    });

    const london = await env.db('campaign_outcomes').where({ campaign_id: campaignId, market: 'london', metric: 'conversions' }).first();
    expect(london.value).toBe(12);
    const view = await json<{ batches: unknown[]; stored: Array<{ metric: string; rows: number }> }>(
      await api.fetch(`/api/v1/campaigns/${campaignId}/outcomes`, { token: human }),
    );
    expect(view.batches).toHaveLength(2);
    expect(view.stored).toEqual(expect.arrayContaining([expect.objectContaining({ metric: 'conversions', rows: 2 })]));
  });

  test('every bad row comes back with its row number, and nothing of the batch is stored', async () => {
    const human = await env.issuer.token({ org: 'org-out-2', user: 'analyst' });
    const campaignId = await campaignOf(api, human);
    const before = await measurementState(env);
    const res = await sendOutcomes(
      api,
      human,
      campaignId,
      rowsJson([
        row('2026-01-01', 'london', 10),
        row('2026-02-30', 'london', 1),
        row('2026-01-02', 'atlantis', 1),
        row('2026-01-02', 'london', -1),
        { ...row('2026-01-03', 'london', 1), colour: 'red' },
        row('2026-01-01', 'london', 11),
        row('2026-01-04', 'london', 1.5, 'revenueMinor'),
        row('2026-01-04', 'london', 1, 'likes'),
      ]),
    );
    expect(res.status).toBe(400);
    const problem = await json<{ code: string; errors: Array<{ path: string; message: string }> }>(res);
    expect(problem.code).toBe('invalid_rows');
    const messages = problem.errors.map((e) => e.message);
    for (const n of [2, 3, 4, 5, 6, 7, 8]) expect(messages.some((m) => m.startsWith(`row ${n}:`))).toBe(true);
    expect(messages.some((m) => m.startsWith('row 1:'))).toBe(false);
    expect(messages.find((m) => m.startsWith('row 6:'))).toMatch(/repeats row 1/);
    expect(await measurementState(env)).toEqual(before);
  });

  test('CSV row errors name the row and its line', async () => {
    const human = await env.issuer.token({ org: 'org-out-3', user: 'analyst' });
    const campaignId = await campaignOf(api, human);
    const before = await measurementState(env);
    const csv = 'market,date,metric,value\r\nlondon,2026-01-01,conversions,3\r\nlondon,2026-01-02,conversions,three\r\n';
    const res = await sendOutcomes(api, human, campaignId, csv, 'text/csv');
    expect(res.status).toBe(400);
    const problem = await json<{ errors: Array<{ message: string; path: string }> }>(res);
    expect(problem.errors).toEqual([
      expect.objectContaining({ path: 'body.rows.1.value', message: expect.stringMatching(/^row 2 \(line 3\)/) }),
    ]);
    expect(await measurementState(env)).toEqual(before);
  });

  test.each([
    ['no rows', 'application/json', rowsJson([])],
    ['an unknown top-level field', 'application/json', JSON.stringify({ rows: [row('2026-01-01', 'london', 1)], source: 'x' })],
    ['malformed JSON', 'application/json', '{"rows": ['],
    ['a CSV without the four columns', 'text/csv', 'date,market,value\n2026-01-01,london,1\n'],
    ['a CSV with a ragged row', 'text/csv', 'date,market,metric,value\n2026-01-01,london,conversions,1,9\n'],
    ['a header-only CSV', 'text/csv', 'date,market,metric,value\n'],
    ['an unsupported content type', 'application/xml', '<rows/>'],
    ['a non-UTF-8 charset', 'text/csv; charset=latin1', 'date,market,metric,value\n'],
    ['bytes that are not UTF-8', 'text/csv', Buffer.from([0x64, 0xff, 0xfe, 0x0a])],
  ])('%s is a 400 and changes nothing', async (_name, type, body) => {
    const human = await env.issuer.token({ org: 'org-out-4', user: 'analyst' });
    const campaignId = await campaignOf(api, human);
    const before = await measurementState(env);
    const res = await sendOutcomes(api, human, campaignId, body, type);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await measurementState(env)).toEqual(before);
  });

  test('10,000 rows are accepted; 10,001 are a 400 that stores nothing', async () => {
    const human = await env.issuer.token({ org: 'org-out-5', user: 'analyst' });
    const campaignId = await campaignOf(api, human);
    const days = (n: number) =>
      Array.from({ length: n }, (_, i) => {
        const date = new Date(Date.UTC(2000, 0, 1) + Math.floor(i / 10) * 86_400_000).toISOString().slice(0, 10);
        return row(
          date,
          ['london', 'anglia', 'central', 'granada', 'yorkshire', 'tyne-tees', 'border', 'meridian', 'west', 'wales'][i % 10]!,
          i,
        );
      });
    const before = await measurementState(env);
    const tooMany = await sendOutcomes(api, human, campaignId, rowsJson(days(10_001)));
    expect(tooMany.status).toBe(400);
    expect(await measurementState(env)).toEqual(before);
    const max = await sendOutcomes(api, human, campaignId, rowsJson(days(10_000)));
    expect(max.status).toBe(201);
    expect(await env.db('campaign_outcomes').where({ campaign_id: campaignId }).count({ n: '*' })).toEqual([{ n: '10000' }]);
  });

  test('a body over the limit is a 413 problem and stores nothing', async () => {
    const human = await env.issuer.token({ org: 'org-out-6', user: 'analyst' });
    const campaignId = await campaignOf(api, human);
    const before = await measurementState(env);
    const res = await sendOutcomes(api, human, campaignId, `${rowsJson([row('2026-01-01', 'london', 1)])}${' '.repeat(2 * 1024 * 1024)}`);
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await measurementState(env)).toEqual(before);
  });

  test('an Idempotency-Key is required, and a retry with the same key replays the first batch without importing again', async () => {
    const human = await env.issuer.token({ org: 'org-out-7', user: 'analyst' });
    const campaignId = await campaignOf(api, human);
    const body = rowsJson([row('2026-01-01', 'london', 1)]);
    const noKey = await api.fetch(`/api/v1/campaigns/${campaignId}/outcomes`, {
      method: 'POST',
      token: human,
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(noKey.status).toBe(400);
    expect(await json(noKey)).toMatchObject({ code: 'idempotency_key_required' });
    const key = randomUUID();
    const first = await sendOutcomes(api, human, campaignId, body, 'application/json', { 'idempotency-key': key });
    const again = await sendOutcomes(api, human, campaignId, body, 'application/json', { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(await json(again)).toEqual(await json(first));
    expect(await env.db('outcome_import_batches').where({ campaign_id: campaignId })).toHaveLength(1);
    const changed = await sendOutcomes(api, human, campaignId, rowsJson([row('2026-01-01', 'london', 2)]), 'application/json', {
      'idempotency-key': key,
    });
    expect(changed.status).toBe(409);
  });

  test("another tenant's campaign is a 404 identical to one that never existed, and nothing is stored", async () => {
    const owner = await env.issuer.token({ org: 'org-out-8', user: 'analyst' });
    const stranger = await env.issuer.token({ org: 'org-out-9', user: 'analyst' });
    const campaignId = await campaignOf(api, owner);
    const before = await measurementState(env);
    const body = rowsJson([row('2026-01-01', 'london', 1)]);
    const foreign = await sendOutcomes(api, stranger, campaignId, body);
    const never = await sendOutcomes(api, stranger, randomUUID(), body);
    const notUuid = await sendOutcomes(api, stranger, 'nope', body);
    for (const r of [foreign, never, notUuid]) expect(r.status).toBe(404);
    const [a, b, c] = await Promise.all([foreign, never, notUuid].map((r) => json(r)));
    expect(withoutRequestId(a)).toEqual(withoutRequestId(b));
    expect(withoutRequestId(c)).toEqual(withoutRequestId(b));
    const listForeign = await api.fetch(`/api/v1/campaigns/${campaignId}/outcomes`, { token: stranger });
    expect(listForeign.status).toBe(404);
    expect(await measurementState(env)).toEqual(before);
    expect((await sendOutcomes(api, '', campaignId, body)).status).toBe(401);
  });

  test('a delegated agent imports only through the governed flow, bound to the exact bytes, with its receipt replayed', async () => {
    const a = await actors(env, api, 'org-out-10', { allowedActions: ['outcomes.import'], budgetCeilingMinor: 0, currency: 'GBP' });
    const campaignId = await campaignOf(api, a.human);
    const body = rowsJson([row('2026-01-01', 'london', 7)]);
    const before = await measurementState(env);
    const unbound = await sendOutcomes(api, a.agent, campaignId, body);
    expect(unbound.status).toBe(403);
    expect(await json(unbound)).toMatchObject({ code: 'execution_binding_required' });
    expect(await measurementState(env)).toEqual(before);

    const contentSha256 = createHash('sha256').update(body).digest('hex');
    const prepared = await prepare(api, a.agent, 'outcomes.import', { campaignId, contentSha256 }, 0);
    expect(prepared.status).toBe(201);
    const p = await json<Prepared>(prepared);
    const approved = await post(api, a.human, `/api/v1/agent/approvals/${p.approvalId}/approve`, { expectedActionDigest: p.actionDigest });
    const stepId = (await json<{ executeStep: { id: string } }>(approved)).executeStep.id;
    const bound = { [STEP]: stepId, [DIGEST]: p.actionDigest };

    const other = await sendOutcomes(api, a.agent, campaignId, rowsJson([row('2026-01-01', 'london', 70)]), 'application/json', bound);
    expect(other.status).toBe(409);
    expect(await json(other)).toMatchObject({ code: 'action_changed' });
    expect(await measurementState(env)).toEqual(before);

    const done = await sendOutcomes(api, a.agent, campaignId, body, 'application/json', bound);
    expect(done.status).toBe(201);
    const first = await json<{ batch: { agentClientId: string } }>(done);
    expect(first.batch.agentClientId).toBe('planner-bot');
    const replay = await sendOutcomes(api, a.agent, campaignId, body, 'application/json', bound);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('x-flightdeck-receipt')).toBe('replayed');
    expect(await json(replay)).toEqual(first);
    expect(await env.db('outcome_import_batches').where({ campaign_id: campaignId })).toHaveLength(1);
  });

  test('markets come from configuration: GEO_MARKETS replaces the default list, and a bad list stops the start', async () => {
    const cities = [
      { id: 'manchester', name: 'Manchester' },
      { id: 'leeds', name: 'Leeds' },
    ];
    const cityApi = await env.api({ GEO_MARKETS: JSON.stringify(cities) });
    const human = await env.issuer.token({ org: 'org-out-11', user: 'analyst' });
    const listed = await json<{ markets: unknown }>(await cityApi.fetch('/api/v1/measurement/markets', { token: human }));
    expect(listed.markets).toEqual(cities);
    const campaignId = await campaignOf(cityApi, human);
    expect((await sendOutcomes(cityApi, human, campaignId, rowsJson([row('2026-01-01', 'manchester', 1)]))).status).toBe(201);
    expect((await sendOutcomes(cityApi, human, campaignId, rowsJson([row('2026-01-01', 'london', 1)]))).status).toBe(400);
    const defaults = await json<{ markets: Array<{ id: string }> }>(await api.fetch('/api/v1/measurement/markets', { token: human }));
    expect(defaults.markets.map((m) => m.id)).toContain('london');
    for (const bad of ['not json', '[{"id":"London","name":"x"},{"id":"b","name":"y"}]', '[{"id":"a","name":"x"},{"id":"a","name":"y"}]']) {
      expect(() => loadConfig({ GEO_MARKETS: bad })).toThrow(/GEO_MARKETS/);
    }
  });
});
