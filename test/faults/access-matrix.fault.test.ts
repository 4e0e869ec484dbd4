import { randomUUID } from 'node:crypto';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import type { RunningWorkers } from '../../workers/main';
import { AGENT_CLIENT, HUMAN_PERMISSIONS, ORG, admin, pathTargets, seedWorld, startWorkers, type World } from './support/access-world';
import { exampleOf } from './support/input-arbitraries';
import { RawClient, isProblemJson, type RawResponse } from './support/input-http';
import { figure } from './support/input-report';
import { fillPath, isStaffSurface, operationsOf, pathParams, type Operation } from './support/input-openapi';
import { differences, fingerprint } from './support/input-state';

/**
 * Every private operation of the OpenAPI document against every caller who must not reach it:
 * another tenant, the DOOH-only product on CTV resources, a delegated agent on human-only
 * operations, a human without the permission, non-staff, revoked staff and unassigned staff
 * on the staff surface, an expired token and a token for another audience. Each must get the
 * specification's status; a hidden resource's 404 must read exactly like a 404 for an id that
 * never existed; and none of these requests may change anything.
 */
let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers | undefined;
let world: World;
let ops: Operation[];
let client: RawClient;
const t: Record<string, string> = {};

beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_EXTRACT_MAX: '100000' });
  workers = await startWorkers(env);
  world = await seedWorld(env, api);
  await admin(env, 'staff', 'grant', '--user', 'staff-other');
  await admin(env, 'staff', 'assign', '--user', 'staff-other', '--org', 'org-c');
  await admin(env, 'staff', 'grant', '--user', 'staff-revoked');
  await admin(env, 'staff', 'assign', '--user', 'staff-revoked', '--org', ORG);
  await admin(env, 'staff', 'revoke', '--user', 'staff-revoked');
  const token = (o: Parameters<TestEnv['issuer']['token']>[0]) => env.issuer.token(o);
  const lead = { org: ORG, user: `${ORG}-lead`, permissions: HUMAN_PERMISSIONS };
  Object.assign(t, {
    foreign: await token({ ...lead, org: 'org-b', user: 'org-b-lead' }),
    dooh: await token({ ...lead, product: 'flightdeck-dooh' }),
    agent: await token({ ...lead, agent: AGENT_CLIENT }),
    noPermission: await token({ org: ORG, user: `${ORG}-viewer`, permissions: [] }),
    nonStaff: world.human,
    staffAgent: await token({ org: 'staff-org', user: 'staff-1', agent: 'ops-bot' }),
    revoked: await token({ org: 'staff-org', user: 'staff-revoked' }),
    unassigned: await token({ org: 'staff-org', user: 'staff-other' }),
    expired: await token({ ...lead, expiresIn: Math.floor(Date.now() / 1000) - 120 }),
    wrongAudience: await token({ ...lead, audience: 'https://mcp.test.flightdeck.dev/mcp' }),
  });
  // Each caller's first verified request provisions its workspace; do that before the fingerprint.
  for (const k of ['foreign', 'dooh', 'noPermission', 'staffAgent', 'revoked', 'unassigned'])
    await api.fetch('/api/v1/auth/context', { token: t[k]! });
  ops = operationsOf((await (await api.fetch('/api/v1/openapi.json')).json()) as never).filter((op) => op.bearer);
  client = new RawClient(api.url, 4);
  await workers.close();
  workers = undefined;
}, 180_000);
afterAll(async () => {
  client?.close();
  await env.close();
});

const HUMAN_ONLY = /\bhumans? only\b|needs a human|delegated agents cannot/i;
const PERMISSION = /\b[a-z]+:[a-z]+\b/;
const CHANNEL_FIELDS = ['channel', 'channels', 'exposedOn'];
const doc403 = (op: Operation) => op.responses['403']?.description ?? '';

interface Case {
  name: string;
  op: Operation;
  token: string;
  /** A status, or `hidden`: 200 that reveals nothing of org-a (nor, to a non-member, staff access). */
  expected: number | 'hidden';
  member?: boolean;
  /** Compare the 404 with the same caller's 404 for ids that never existed. */
  twin?: boolean;
}

function bodyOf(op: Operation): { headers: Record<string, string>; body?: Buffer | string } {
  if (!op.body) return { headers: {} };
  if (op.body.contentType !== 'application/json') {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(32, 1)]);
    return { headers: { 'content-type': 'image/png' }, body: png };
  }
  return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(exampleOf(op.body.schema, world.realistic)) };
}

function send(c: Case, neverExisted = false): Promise<RawResponse> {
  const targets = pathTargets(world, c.op);
  const values = Object.fromEntries(
    Object.entries(targets).map(([k, v]) => [
      k,
      neverExisted && v.tenant ? (k === 'advertiserId' ? 'org-never' : (v.never?.() ?? randomUUID())) : v.value,
    ]),
  );
  const { headers, body } = bodyOf(c.op);
  return client.send({
    method: c.op.method,
    path: fillPath(c.op.path, values),
    // A careful client sends an Idempotency-Key everywhere; the document does not say where it is required.
    headers: { ...headers, authorization: `Bearer ${c.token}`, 'idempotency-key': randomUUID() },
    ...(body ? { body } : {}),
  });
}

function casesFor(op: Operation): Case[] {
  const cases: Case[] = [
    { name: 'expired token', op, token: t.expired!, expected: 401 },
    { name: 'wrong audience', op, token: t.wrongAudience!, expected: 401 },
  ];
  const targets = Object.values(pathTargets(world, op));
  if (isStaffSurface(op)) {
    const hidden = op.responses['404'] ? 404 : 'hidden';
    cases.push({ name: 'non-staff customer', op, token: t.nonStaff!, expected: hidden });
    cases.push({ name: 'delegated agent of a staff member', op, token: t.staffAgent!, expected: hidden });
    cases.push({ name: 'revoked staff', op, token: t.revoked!, expected: hidden });
    cases.push({
      name: 'staff not assigned to the client',
      op,
      token: t.unassigned!,
      member: true,
      ...(targets.length ? { expected: 404, twin: true } : { expected: 'hidden' }),
    });
    return cases;
  }
  if (targets.some((x) => x.tenant)) cases.push({ name: 'foreign tenant', op, token: t.foreign!, expected: 404, twin: true });
  const body = JSON.stringify(op.body?.contentType === 'application/json' ? exampleOf(op.body.schema, world.realistic) : {});
  const ctvIds = [world.ids.campaign, world.ids.plan, world.ids.creative, world.ids.pendingCampaign].filter((id) => body.includes(id!));
  if (targets.some((x) => x.ctv)) cases.push({ name: 'wrong product (DOOH-only on CTV)', op, token: t.dooh!, expected: 404, twin: true });
  else if (pathParams(op).length === 0 && CHANNEL_FIELDS.some((f) => new RegExp(`"${f}":\\[?"ctv"`).test(body)))
    cases.push({ name: 'wrong product (DOOH-only asks for CTV)', op, token: t.dooh!, expected: 403 });
  else if (pathParams(op).length === 0 && ctvIds.length)
    cases.push({ name: 'wrong product (DOOH-only names a CTV resource)', op, token: t.dooh!, expected: 404 });
  if (HUMAN_ONLY.test(doc403(op))) cases.push({ name: 'delegated agent on a human-only operation', op, token: t.agent!, expected: 403 });
  if (PERMISSION.test(doc403(op)))
    cases.push({ name: `human without ${PERMISSION.exec(doc403(op))![0]}`, op, token: t.noPermission!, expected: 403 });
  return cases;
}

/** The body as sent, minus the per-request `requestId` member (the only part allowed to differ). */
const withoutRequestId = (body: string) => body.replace(/"requestId":"[^"]*",?/, '');

describe('access matrix over every private operation of the OpenAPI document', () => {
  test('every refused caller gets the specification status, hidden resources read like ids that never existed, and nothing changes', async () => {
    const before = await fingerprint(env.db, env.redis, env.prefix);
    const cases = ops.flatMap(casesFor);
    const mismatches: string[] = [];
    let pairs = 0;
    const started = Date.now();
    for (const c of cases) {
      const res = await send(c);
      const where = `${c.name}: ${c.op.method} ${c.op.path}`;
      if (c.expected === 'hidden') {
        if (res.status !== 200 || res.body.includes(ORG) || (!c.member && res.body.includes('"access":true')))
          mismatches.push(`${where} → ${res.status} ${res.body.slice(0, 200)} (expected 200 revealing nothing)`);
        continue;
      }
      if (res.status !== c.expected || !isProblemJson(res)) {
        mismatches.push(`${where} → ${res.status} ${res.body.slice(0, 200)} (expected ${c.expected})`);
        continue;
      }
      if (c.twin) {
        pairs++;
        const never = await send(c, true);
        if (never.status !== 404 || withoutRequestId(never.body) !== withoutRequestId(res.body))
          mismatches.push(`${where}: the 404 differs from a never-existed id's: ${res.body} vs ${never.status} ${never.body}`);
      }
    }
    // Idempotency records keep every first answer, refusals included, by design (the same key replays it).
    const changed = differences(before, await fingerprint(env.db, env.redis, env.prefix)).filter(
      (d) => !d.startsWith('table idempotency_records:'),
    );
    figure(
      `access matrix: ${cases.length} refused requests over ${ops.length} private operations in ${Date.now() - started} ms, ` +
        `${mismatches.length} not as specified, ${pairs} hidden-resource 404s compared byte for byte (requestId removed), ${changed.length} state changes`,
    );
    for (const m of mismatches) figure(`access mismatch ${m}`);
    for (const c of changed) figure(`changed ${c}`);
    expect(new Set(cases.map((c) => c.op.operationId)).size).toBe(ops.length);
    expect(mismatches).toEqual([]);
    expect(changed).toEqual([]);
  });
});
