import { randomUUID } from 'node:crypto';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, launchPlan, post, waitForBooking } from '../support/bookings';
import { fundWallet } from '../support/wallet';
import { apiRoutes } from '../../api/app';
import type { RouteDef } from '../../api/http/route';
import { figure } from './support/input-report';
import { finalMarch, invoiceBody } from '../reconciliation/support';

/**
 * Every route whose Idempotency-Key policy is `required`, hit by 50 concurrent requests that
 * share one key: exactly one execution, and every other answer is the replay of its response
 * (its exact bytes) or a 409 (`idempotency_in_flight`, `idempotency_conflict`). The routes are
 * read from the route definitions (the policy is not in the OpenAPI document); each needs a
 * fixture below that builds a fresh resource and says how many times the route has executed
 * against it.
 */
const CONCURRENCY = 50;

interface Target {
  path: string;
  token: string;
  /** The i-th request's body; `varied` gives 50 different bodies, only the first of which can succeed. */
  body(i: number, varied: boolean): unknown;
  /** Effects of executions so far, from the rows the route writes. */
  executions(): Promise<number>;
}

let env: TestEnv;
let api: TestApi;
let routes: RouteDef[];
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
  // Amendments need a running campaign: its lines booked by the sandbox suppliers.
  await env.workers({ WORKER_QUEUES: 'suppliers' });
  routes = apiRoutes(api.deps).filter((r) => r.idempotency === 'required');
});
afterAll(() => env.close());

/** A person of a new workspace of its own, so that each race counts only its own rows. */
async function freshPerson() {
  const org = `org-race-${randomUUID().slice(0, 8)}`;
  const token = await env.issuer.token({ org, user: 'lead' });
  await api.fetch('/api/v1/auth/context', { token });
  return { org, token };
}

const count = async (table: string, where: Record<string, string>) => Number((await env.db(table).where(where).count({ n: '*' }))[0]!.n);

const FIXTURES: Record<string, () => Promise<Target>> = {
  /** Each execution commits one funding request (and opens one checkout session for it). */
  async createTopupRequest() {
    const { org, token } = await freshPerson();
    return {
      path: '/api/v1/billing/topup/requests',
      token,
      body: (i, varied) => ({ amountMinor: varied ? 10_000 + i : 10_000, currency: 'GBP' }),
      executions: () => count('funding_requests', { advertiser_id: org }),
    };
  },

  /** Each execution records one artifact of the study. */
  async uploadStudyArtifact() {
    const { token } = await freshPerson();
    const { study } = (await (await post(api, token, '/api/v1/brand-lift-studies', { name: 'Race' })).json()) as { study: { id: string } };
    const retainUntil = new Date(Date.now() + 30 * 86_400_000).toISOString();
    return {
      path: `/api/v1/brand-lift-studies/${study.id}/artifacts`,
      token,
      body: (i, varied) => ({
        purpose: 'contract',
        mediaType: 'text/plain',
        contentBase64: Buffer.from(`Terms of the study, copy ${varied ? i : 0}.`).toString('base64'),
        retainUntil,
      }),
      executions: () => count('study_artifacts', { study_id: study.id }),
    };
  },

  /** Each execution stores one invoice of the workspace's final March (and its matched lines). */
  async importInvoice() {
    const { org, token } = await freshPerson();
    const { lineIds } = await finalMarch(env, org, [50_000], [[10_000, 10_000]]);
    return {
      path: '/api/v1/billing/invoices',
      token,
      body: (i, varied) =>
        invoiceBody([{ lineId: lineIds[0], impressions: 200_000, amountMinor: 20_000 }], { invoiceNumber: `INV-RACE-${varied ? i : 0}` }),
      executions: () => count('invoices', { advertiser_id: org }),
    };
  },

  /** Each execution records one import batch of the campaign. */
  async importOutcomes() {
    const { token } = await freshPerson();
    const { campaignId } = await draftCampaign(api, token, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }]);
    return {
      path: `/api/v1/campaigns/${campaignId}/outcomes`,
      token,
      body: (i, varied) => ({ rows: [{ date: '2026-01-05', market: 'london', metric: 'conversions', value: varied ? 100 + i : 100 }] }),
      executions: () => count('outcome_import_batches', { campaign_id: campaignId }),
    };
  },

  /** A running sandbox campaign; each execution records one amendment of its booking. */
  async amendCampaign() {
    const org = `org-race-${randomUUID().slice(0, 8)}`;
    const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], org, {
      endDate: '2099-03-31',
    });
    const booking = await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
    const lineId = booking.lines[0]!.id;
    return {
      path: `/api/v1/campaigns/${launched.campaignId}/amendments`,
      token: launched.token,
      body: (i, varied) => ({ expectedVersion: booking.version, lines: [{ lineId, budgetMinor: varied ? 9_000 - i : 9_000 }] }),
      executions: () => count('booking_amendments', { booking_id: booking.id }),
    };
  },

  /** A running campaign; each execution sets its daily cap and moves the campaign's version once. */
  async setDailyCaps() {
    const org = `org-race-${randomUUID().slice(0, 8)}`;
    const launched = await launchPlan(env, api, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 }], org, {
      endDate: '2099-03-31',
    });
    await waitForBooking(api, launched.token, launched.booking.id, (b) => b.lines.every((l) => l.status === 'confirmed'));
    const version = async () => Number((await env.db('campaigns').where({ id: launched.campaignId }).first('version')).version);
    const before = await version();
    return {
      path: `/api/v1/campaigns/${launched.campaignId}/daily-caps`,
      token: launched.token,
      body: (i, varied) => ({ expectedVersion: before, dailyCapMinor: varied ? 1_000 + i : 1_000, lines: [] }),
      executions: async () => (await version()) - before,
    };
  },

  /** A study with a funded human approval; each execution uses the approval and bumps the revision. */
  async draftStudy() {
    const { org, token } = await freshPerson();
    await fundWallet(env, org, 1_000_000);
    const { study } = (await (await post(api, token, '/api/v1/brand-lift-studies', { name: 'Race' })).json()) as { study: { id: string } };
    const { quote } = (await (await post(api, token, `/api/v1/brand-lift-studies/${study.id}/quotes`, { sampleSize: 1000 })).json()) as {
      quote: { id: string };
    };
    const { approval } = (await (
      await post(api, token, `/api/v1/brand-lift-studies/${study.id}/approvals`, { quoteId: quote.id })
    ).json()) as {
      approval: { id: string };
    };
    return {
      path: `/api/v1/brand-lift-studies/${study.id}/draft`,
      token,
      body: (i, varied) => ({
        expectedRevision: varied ? 1 + i : 1,
        expectedConnectionRevision: null,
        quoteId: quote.id,
        approvalId: approval.id,
      }),
      async executions() {
        const row = await env.db('brand_lift_studies').where({ id: study.id }).first('revision');
        const used = await env.db('study_approvals').where({ id: approval.id }).whereNotNull('used_at').count({ n: '*' });
        const revisions = row.revision - 1;
        if (revisions !== Number(used[0]!.n)) throw new Error(`revision ${row.revision} but ${used[0]!.n} approvals used`);
        return revisions;
      },
    };
  },
};

interface Answer {
  i: number;
  status: number;
  body: Record<string, unknown>;
  /** The body's bytes as received: a replay must be these bytes exactly, not equal JSON. */
  text: string;
  replayed: boolean;
}

async function race(target: Target, varied: boolean): Promise<Answer[]> {
  const key = randomUUID();
  return Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      const res = await api.fetch(target.path, {
        method: 'POST',
        token: target.token,
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(target.body(i, varied)),
      });
      const text = await res.text();
      return {
        i,
        status: res.status,
        body: JSON.parse(text) as Record<string, unknown>,
        text,
        replayed: res.headers.get('idempotency-replayed') === 'true',
      };
    }),
  );
}

const IDEMPOTENCY_409 = ['idempotency_in_flight', 'idempotency_conflict'];
const isIdempotency409 = (a: Answer) => a.status === 409 && IDEMPOTENCY_409.includes(String(a.body.code));

async function check(route: RouteDef, varied: boolean) {
  const fixture = FIXTURES[route.operationId];
  if (!fixture)
    throw new Error(`No race fixture for ${route.operationId} (${route.method} ${route.path}); add one to idempotency-race.fault.test.ts.`);
  const target = await fixture();
  const records = async () => Number((await env.db('idempotency_records').count({ n: '*' }))[0]!.n);
  const recordsBefore = await records();
  const answers = await race(target, varied);
  const executed = answers.filter((a) => !a.replayed && !isIdempotency409(a));
  const first = executed[0];
  const stray = answers.filter(
    (a) => a !== first && !isIdempotency409(a) && !(a.replayed && first && a.status === first.status && a.text === first.text),
  );
  const executions = await target.executions();
  const replays = answers.filter((a) => a.replayed).length;
  figure(
    `idempotency race ${route.operationId} (${varied ? 'different bodies' : 'one body'}): ${CONCURRENCY} concurrent requests with one key, ` +
      `${executed.length} executed (${first?.status}), ${executions} state change(s), ${replays} replays, ` +
      `${answers.filter(isIdempotency409).length} idempotency 409s, ${stray.length} other answers`,
  );
  expect(executed.map((a) => a.status)).toHaveLength(1);
  expect(stray.map((a) => `${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
  // One key, one record: the route's own rows changed at most once, and exactly once when it succeeded.
  expect(await records()).toBe(recordsBefore + 1);
  expect(executions).toBe(first!.status < 300 ? 1 : 0);
  if (!varied) expect(first!.status).toBeLessThan(300);
  if (varied)
    expect(
      answers.filter(
        (a) => a.replayed && a.i !== first!.i && JSON.stringify(target.body(a.i, true)) !== JSON.stringify(target.body(first!.i, true)),
      ),
    ).toEqual([]);
}

describe('Idempotency-Key policy `required` under concurrency', () => {
  test('the route definitions name at least one route with the required policy', () => {
    expect(routes.map((r) => `${r.method.toUpperCase()} ${r.path}`).length).toBeGreaterThan(0);
  });

  test('50 concurrent requests with one key and one body execute once; the rest replay it or get an idempotency 409', async () => {
    for (const route of routes) await check(route, false);
  });

  test('50 concurrent requests with one key and 50 different bodies execute once; the rest get an idempotency 409', async () => {
    for (const route of routes) await check(route, true);
  });
});
