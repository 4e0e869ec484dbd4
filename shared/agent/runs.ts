import { isUuid } from '../ids';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { notFound } from '../errors';
import type { Principal } from '../auth/principal';
import { approvalView } from './governance';

export const RunQuerySchema = z
  .strictObject({ detailLimit: z.coerce.number().int().min(1).max(500).default(100) })
  .meta({ id: 'AgentRunQuery' });

export const EvidenceSchema = z
  .strictObject({
    kind: z
      .string()
      .min(1)
      .max(120)
      .regex(/^[a-z][a-z0-9]*(?:[._:-][a-z0-9]+)*$/),
    source: z.string().min(1).max(500),
    content: z.record(z.string(), z.unknown()),
    observedAt: z.iso.datetime({ offset: true }).optional(),
    stepId: z.string().min(1).max(128).optional(),
  })
  .meta({ id: 'AgentEvidence' });

const iso = (d: Date | null) => (d ? d.toISOString() : null);

async function findRun(db: Knex, p: Principal, id: string) {
  if (!isUuid(id)) throw notFound();
  const run = await db('agent_runs').where({ id, advertiser_id: p.advertiserId }).first();
  // Product scope is the route's scoped lookup (`agent-run`): a run is as visible as what its action names.
  if (!run) throw notFound();
  return run;
}

/** A run with its steps, approvals, receipts and evidence, each list capped at detailLimit (oldest first). */
export async function readRun(db: Knex, p: Principal, id: string, detailLimit: number) {
  const run = await findRun(db, p, id);
  const [steps, approvals, receipts, evidence] = await Promise.all([
    db('agent_steps')
      .where({ run_id: id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(detailLimit + 1),
    db('agent_approvals')
      .where({ run_id: id })
      .orderBy('created_at')
      .limit(detailLimit + 1),
    db('agent_receipts as r')
      .join('agent_steps as s', 's.id', 'r.step_id')
      .where('s.run_id', id)
      .orderBy('r.created_at')
      .select('r.*')
      .limit(detailLimit + 1),
    db('agent_evidence')
      .where({ run_id: id })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(detailLimit + 1),
  ]);
  const cap = <T>(xs: T[]) => xs.slice(0, detailLimit);
  return {
    run: {
      id: run.id,
      actionName: run.action_name,
      userId: run.user_id,
      agentClientId: run.agent_client_id,
      createdAt: iso(run.created_at),
      steps: cap(steps).map((s) => ({
        id: s.id,
        kind: s.kind,
        status: s.status,
        actionName: s.action_name,
        actionDigest: s.action_digest,
        approvalId: s.approval_id,
        resolution: s.resolution ?? null,
        createdAt: iso(s.created_at),
        startedAt: iso(s.started_at),
        finishedAt: iso(s.finished_at),
      })),
      approvals: cap(approvals).map(approvalView),
      receipts: cap(receipts).map((r) => ({
        stepId: r.step_id,
        status: r.response_status,
        body: r.response_body === null ? null : (JSON.parse(r.response_body as string) as unknown),
        createdAt: iso(r.created_at),
      })),
      evidence: cap(evidence).map(evidenceView),
      truncated: {
        steps: steps.length > detailLimit,
        approvals: approvals.length > detailLimit,
        receipts: receipts.length > detailLimit,
        evidence: evidence.length > detailLimit,
      },
    },
  };
}

function evidenceView(e: Record<string, unknown>) {
  return {
    id: e.id,
    kind: e.kind,
    source: e.source,
    content: e.content,
    observedAt: iso(e.observed_at as Date | null),
    stepId: e.step_id ?? null,
    recordedBy: e.recorded_by,
    createdAt: iso(e.created_at as Date),
  };
}

export async function recordEvidence(db: Knex, p: Principal, runId: string, body: z.infer<typeof EvidenceSchema>) {
  await findRun(db, p, runId);
  if (body.stepId && !(isUuid(body.stepId) && (await db('agent_steps').where({ id: body.stepId, run_id: runId }).first('id'))))
    throw notFound();
  const [row] = await db('agent_evidence')
    .insert({
      id: randomUUID(),
      run_id: runId,
      step_id: body.stepId ?? null,
      kind: body.kind,
      source: body.source,
      content: JSON.stringify(body.content),
      observed_at: body.observedAt ?? null,
      recorded_by: p.agentClientId ? `${p.userId}|agent:${p.agentClientId}` : p.userId,
    })
    .returning('*');
  return { evidence: evidenceView(row) };
}

/** An approval and where it stands (pending, approved with its execute step, abandoned); its route checks its product scope. */
export async function readApproval(db: Knex, p: Principal, id: string) {
  if (!isUuid(id)) throw notFound();
  const row = await db('agent_approvals').where({ id, advertiser_id: p.advertiserId }).first();
  if (!row) throw notFound();
  return { approval: approvalView(row) };
}
