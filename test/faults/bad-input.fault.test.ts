import fc from 'fast-check';
import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import type { RunningWorkers } from '../../workers/main';
import { AGENT_CLIENT, ORG, pathTargets, seedWorld, startWorkers, type World } from './support/access-world';
import { RawClient, inPool, isProblemJson, type RawResponse } from './support/input-http';
import { figure } from './support/input-report';
import { isStaffSurface, operationsOf, type OpenApiDocument, type Operation } from './support/input-openapi';
import { mutationArbs, toRaw, validShapedArb, type PlanContext, type Planned } from './support/input-requests';
import { differences, fingerprint } from './support/input-state';

/**
 * Hostile input against every operation of the OpenAPI document, generated with fast-check
 * from the document's own schemas. Phase one sends only invalid requests (each breaks one
 * rule), so nothing at all may change: the database and Redis are compared before and after.
 * Phase two sends requests of a valid shape, with workers running; they may change state,
 * but none may fail with a 5xx and every refusal must be problem+json.
 */
const SEED = Number(process.env.FAULT_SEED ?? 20261122);
const MUTATIONS = 7_000;
const VALID_SHAPED = 3_000;
const WIDTH = 8;

let env: TestEnv;
let api: TestApi;
let workers: RunningWorkers | undefined;
let world: World;
let ops: Operation[];
let client: RawClient;

beforeAll(async () => {
  env = await createTestEnv();
  // Extraction has its own, tighter bucket; this test is about input, not rate limits.
  api = await env.api({ RATE_LIMIT_EXTRACT_MAX: '100000' });
  workers = await startWorkers(env);
  world = await seedWorld(env, api);
  const doc = (await (await api.fetch('/api/v1/openapi.json')).json()) as OpenApiDocument;
  ops = operationsOf(doc);
  client = new RawClient(api.url, WIDTH);
}, 180_000);
afterAll(async () => {
  client?.close();
  await env.close();
});

async function contextFor(op: Operation): Promise<PlanContext> {
  const targets = pathTargets(world, op);
  const pathValues = Object.fromEntries(Object.entries(targets).map(([k, t]) => [k, t.value]));
  const agent = await env.issuer.token({ org: ORG, user: `${ORG}-lead`, agent: AGENT_CLIENT });
  const auth = !op.bearer ? undefined : `Bearer ${isStaffSurface(op) ? world.staff : world.human}`;
  return {
    pathValues,
    realistic: world.realistic,
    ...(auth ? { auth } : {}),
    ...(op.bearer && !isStaffSurface(op) ? { altAuth: `Bearer ${agent}` } : {}),
  };
}

/** `total` requests spread evenly over the operations, each operation with its own derived seed. */
async function plan(
  total: number,
  arbsOf: (op: Operation, ctx: PlanContext) => fc.Arbitrary<Planned>,
  seed: number,
): Promise<Array<[Operation, Planned]>> {
  const perOp: Array<Array<[Operation, Planned]>> = [];
  for (const [i, op] of ops.entries()) {
    const n = Math.floor(total / ops.length) + (i < total % ops.length ? 1 : 0);
    const arb = arbsOf(op, await contextFor(op));
    perOp.push(fc.sample(arb, { seed: seed + i, numRuns: n }).map((p) => [op, p]));
  }
  // Round-robin, so that concurrent requests hit different routes.
  const longest = Math.max(...perOp.map((l) => l.length));
  return Array.from({ length: longest }, (_, j) => perOp.flatMap((l) => (j < l.length ? [l[j]!] : []))).flat();
}

interface Outcome {
  op: Operation;
  planned: Planned;
  res: RawResponse;
}

const describeOutcome = ({ planned, res }: Outcome) =>
  `${planned.kind}: ${planned.method} ${planned.path.slice(0, 160)} → ${res.status}${res.error ? ` (${res.error})` : ''} ${res.body.slice(0, 300)}`;

/** Offenders grouped by what was sent and what came back; one full example printed per group. */
function grouped(outcomes: Outcome[]): string[] {
  const groups = new Map<string, Outcome[]>();
  for (const o of outcomes) {
    const key = `${o.planned.kind} → ${o.res.status || o.res.error}`;
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  return [...groups.entries()]
    .map(([key, list]) => {
      const operations = new Set(list.map((o) => `${o.op.method} ${o.op.path}`)).size;
      figure(`offender ${key}: ${list.length} requests over ${operations} operations, e.g. ${describeOutcome(list[0]!)}`);
      return `${key} (${operations} operations)`;
    })
    .sort();
}

async function send(planned: Array<[Operation, Planned]>): Promise<Outcome[]> {
  return inPool(planned, WIDTH, async ([op, p]) => ({ op, planned: p, res: await client.send(toRaw(p)) }));
}

async function settledFingerprint() {
  // Nothing runs in the background once the workers are closed; wait until that is so.
  let last = await fingerprint(env.db, env.redis, env.prefix);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const next = await fingerprint(env.db, env.redis, env.prefix);
    if (differences(last, next).length === 0) return next;
    last = next;
  }
  throw new Error('state did not settle after the workers stopped');
}

const tally = (outcomes: Outcome[]) => {
  const byKind: Record<string, number> = {};
  for (const o of outcomes) byKind[o.planned.kind] = (byKind[o.planned.kind] ?? 0) + 1;
  return Object.entries(byKind)
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
};

describe('bad input generated from the OpenAPI document', () => {
  test('invalid requests to every operation are refused with a problem+json 4xx and change nothing in PostgreSQL or Redis', async () => {
    await workers!.close();
    workers = undefined;
    const before = await settledFingerprint();
    const planned = await plan(MUTATIONS, (op, ctx) => fc.oneof(...mutationArbs(op, ctx)), SEED);
    const started = Date.now();
    const outcomes = await send(planned);
    const after = await fingerprint(env.db, env.redis, env.prefix);

    const failed = outcomes.filter((o) => o.res.status >= 500 || o.res.status === 0);
    const accepted = outcomes.filter((o) => o.res.status > 0 && o.res.status < 400);
    const notProblem = outcomes.filter((o) => o.res.status >= 400 && !isProblemJson(o.res));
    const changed = differences(before, after);
    const covered = new Set(outcomes.map((o) => `${o.op.method} ${o.op.path}`));
    figure(
      `bad input (invalid): seed ${SEED} (FAULT_SEED replays), ${outcomes.length} requests over ${covered.size} operations in ${Date.now() - started} ms, ` +
        `${failed.length} 5xx or dropped, ${accepted.length} accepted, ${notProblem.length} not problem+json, ${changed.length} state changes`,
    );
    figure(`bad input mutations: ${tally(outcomes)}`);
    for (const c of changed) figure(`changed ${c}`);

    const groups = { failed: grouped(failed), accepted: grouped(accepted), notProblem: grouped(notProblem) };
    expect(covered.size).toBe(ops.length);
    expect(groups).toEqual({ failed: [], accepted: [], notProblem: [] });
    expect(changed).toEqual([]);
  });

  test('valid-shaped requests to every operation, edge payloads included, never get a 5xx and every refusal is problem+json', async () => {
    // Every queue has a worker, so that readiness is a fair 200.
    workers = await startWorkers(env, true);
    const planned = await plan(VALID_SHAPED, validShapedArb, SEED + 1_000);
    const started = Date.now();
    const outcomes = await send(planned);

    const failed = outcomes.filter((o) => o.res.status >= 500 || o.res.status === 0);
    const notProblem = outcomes.filter((o) => o.res.status >= 400 && !isProblemJson(o.res));
    const ok = outcomes.filter((o) => o.res.status < 400).length;
    const covered = new Set(outcomes.map((o) => `${o.op.method} ${o.op.path}`));
    figure(
      `bad input (valid-shaped): seed ${SEED + 1_000}, ${outcomes.length} requests over ${covered.size} operations in ${Date.now() - started} ms, ` +
        `${ok} accepted, ${outcomes.length - ok} refused, ${failed.length} 5xx or dropped, ${notProblem.length} not problem+json`,
    );
    figure(`bad input valid-shaped kinds: ${tally(outcomes)}`);

    const groups = { failed: grouped(failed), notProblem: grouped(notProblem) };
    expect(covered.size).toBe(ops.length);
    expect(groups).toEqual({ failed: [], notProblem: [] });
  });
});
