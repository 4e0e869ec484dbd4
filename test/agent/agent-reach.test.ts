import fs from 'node:fs';
import path from 'node:path';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { draftCampaign, post } from '../support/bookings';
import { AGENT_UNGOVERNED_MUTATIONS } from '../../api/http/agent-reach';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

interface Operation {
  operationId: string;
  security?: unknown[];
  'x-agent-action'?: string;
  'x-flightdeck-scope'?: unknown;
}
type Doc = { paths: Record<string, Record<string, Operation>> };

const MUTATING = ['post', 'put', 'patch', 'delete'];
const ORG = 'org-reach';

/** The bearer mutations of the served OpenAPI document: method, path and operation. */
async function mutations() {
  const doc = await json<Doc>(await api.fetch('/api/v1/openapi.json'));
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.entries(ops)
      .filter(([method, op]) => MUTATING.includes(method) && (op.security ?? []).length > 0)
      .map(([method, op]) => ({ method: method.toUpperCase(), path: p, op })),
  );
}

/** docs/agent.md's table of agent-reachable mutations: `METHOD /path` → its first word (governed, allowed, refused). */
function documented(): Map<string, string> {
  const text = fs.readFileSync(path.join(__dirname, '../../docs/agent.md'), 'utf8');
  const section = text.slice(text.indexOf('## What an agent may change'));
  const rows = [...section.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) ([^`]+)`\s*\|[^|]*\|\s*([a-z]+)/gm)];
  return new Map(rows.map((m) => [`${m[1]} ${m[2]}`, m[3]!]));
}

describe('every mutation an agent token can reach is governed, declared, or refused', () => {
  test('walking the OpenAPI document: each mutating route answers a delegated agent 403 unless it is governed or declared', async () => {
    const human = await env.issuer.token({ org: ORG, user: 'lead' });
    const agent = await env.issuer.token({ org: ORG, user: 'lead', agent: 'planner-bot' });
    // A real campaign of the workspace, so that routes about it pass their scope check and reach the rule.
    const { campaignId } = await draftCampaign(api, human, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 5_000 }]);
    const before = await env.db('campaigns').where({ advertiser_id: ORG }).count({ n: '*' });
    const ops = await mutations();
    expect(ops.length).toBeGreaterThan(40);
    const docs = documented();
    const seen: string[] = [];
    for (const { method, path: p, op } of ops) {
      const url = p.replace(/\{(\w+)\}/g, (_m, name: string) => (/^(id|campaignId)$/.test(name) ? campaignId : `x-${name}`));
      const res = await post(api, agent, url, {}, method);
      const body = res.status === 204 ? {} : await json(res).catch(() => ({}));
      const governed = Boolean(op['x-agent-action']);
      const declared = op.operationId in AGENT_UNGOVERNED_MUTATIONS;
      const where = `${method} ${p} (${op.operationId})`;
      if (governed) {
        // Without an approved step nothing runs (refused for the binding, or for what is wrong before it), and never by this rule.
        expect([where, res.status >= 400, body.code === 'agent_not_permitted']).toEqual([where, true, false]);
      } else if (declared) {
        expect([where, body.code]).not.toEqual([where, 'agent_not_permitted']);
      } else {
        // The staff surface answers every non-staff caller, agents included, as if it did not exist.
        expect([where, res.status]).toEqual([where, op['x-flightdeck-scope'] === 'staff' ? 404 : 403]);
      }
      expect([where, docs.get(`${method} ${p}`)]).toEqual([where, governed ? 'governed' : declared ? 'allowed' : 'refused']);
      seen.push(`${method} ${p}`);
    }
    // The table lists what exists, nothing more.
    expect([...docs.keys()].sort()).toEqual(seen.sort());
    expect(await env.db('campaigns').where({ advertiser_id: ORG }).count({ n: '*' })).toEqual(before);
  });

  test('an agent creating a campaign or replacing a plan is refused 403 agent_not_permitted, and nothing changes', async () => {
    const human = await env.issuer.token({ org: ORG, user: 'lead' });
    const agent = await env.issuer.token({ org: ORG, user: 'lead', agent: 'planner-bot' });
    const lines = [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 5_000 }];
    const { campaignId, planVersion } = await draftCampaign(api, human, lines);
    const created = await post(api, agent, '/api/v1/campaigns', {
      name: 'By an agent',
      clientName: 'Acme',
      startDate: '2099-01-01',
      endDate: '2099-01-31',
      budgetMinor: 5_000,
      maximumCommitmentMinor: 5_000,
      channels: ['ctv'],
    });
    expect(created.status).toBe(403);
    expect(await json(created)).toMatchObject({ code: 'agent_not_permitted', recovery: 'terminal' });
    const plan = await env.db('plans').where({ campaign_id: campaignId }).first();
    const replaced = await post(api, agent, `/api/v1/campaigns/${campaignId}/plan`, { lines, expectedVersion: planVersion }, 'PUT');
    expect(replaced.status).toBe(403);
    expect(await env.db('plans').where({ campaign_id: campaignId }).first()).toEqual(plan);
    expect(await env.db('campaigns').where({ name: 'By an agent' }).first()).toBeUndefined();
  });
});
