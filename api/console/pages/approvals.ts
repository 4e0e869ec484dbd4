import { approvalView } from '../../../shared/agent/governance';
import { requireHuman } from '../../http/guards';
import { FormFill } from '../forms';
import { esc, json, layout, money, postForm } from '../html';
import type { PageRegistrar } from '../routing';

// The API's own guard: approving and abandoning are a person's, with agent:approve.
const approver = requireHuman('approve or abandon agent actions', 'agent:approve');

type Approval = ReturnType<typeof approvalView>;

function commitmentOf(a: Approval): string {
  const c = a.commitment as { amountMinor?: number; budgetMinor?: number; currency?: string } | null;
  const minor = c?.amountMinor ?? c?.budgetMinor;
  return minor === undefined ? json(a.commitment) : `<strong>${money(minor, c?.currency ?? 'GBP')}</strong> ${json(a.commitment)}`;
}

export const approvalPages: PageRegistrar = (_router, { get, post }, c) => {
  const { db } = c.api;
  get('/console/approvals', async (r, _req, res) => {
    await approver(r.principal);
    const rows = await db('agent_approvals').where({ advertiser_id: r.principal.advertiserId }).orderBy('created_at', 'desc').limit(50);
    const views = rows.map(approvalView);
    const pending = views.filter((a) => a.status === 'pending');
    const decided = views.filter((a) => a.status !== 'pending');
    const steps = decided.length
      ? await db('agent_steps')
          .whereIn(
            'approval_id',
            decided.map((a) => String(a.id)),
          )
          .where({ kind: 'execute' })
      : [];
    const stepOf = (id: unknown) => steps.find((s) => s.approval_id === id);
    // An automatic rule's action beyond its mandate waits here, in the name of the person who enabled the rule.
    const asked = pending.length
      ? await db('rule_firings as f')
          .join('rules as r', 'r.id', 'f.rule_id')
          .whereIn(
            'f.approval_id',
            pending.map((a) => String(a.id)),
          )
          .select('f.approval_id', 'r.id', 'r.name')
      : [];
    const origin = (a: Approval) => {
      const rule = asked.find((x) => x.approval_id === a.id);
      return rule
        ? `Asked by automatic rule <a href="/console/rules/${esc(rule.id)}" data-rule>${esc(rule.name)}</a>: beyond its mandate, so a person decides`
        : `Prepared by agent <code>${esc(a.agentClientId ?? 'a person')}</code>`;
    };
    const pendingHtml = pending.length
      ? pending
          .map(
            (a) => `<section aria-labelledby="ap-${esc(a.id)}"><h2 id="ap-${esc(a.id)}">${esc(a.actionName)}</h2>
<p>${origin(a)} at ${esc(a.createdAt)}. Approval <code>${esc(a.id)}</code>.</p>
<p>Digest of exactly this action: <code data-digest>${esc(a.actionDigest)}</code></p>
<h3>Money</h3>${commitmentOf(a)}<h3>Action and parameters</h3>${json(a.action)}
${postForm(r.viewer, `/console/approvals/${String(a.id)}/approve`, { expectedActionDigest: String(a.actionDigest) }, '<button type="submit">Approve this exact action</button>', 'inline')}
${postForm(
  r.viewer,
  `/console/approvals/${String(a.id)}/abandon`,
  { expectedActionDigest: String(a.actionDigest) },
  `${new FormFill(r.draft, `/console/approvals/${String(a.id)}/abandon`).input({ id: `note-${String(a.id)}`, name: 'note', required: true, attrs: 'maxlength="2000"' })} <button type="submit" class="secondary">Abandon</button>`,
  'inline',
)}</section>`,
          )
          .join('')
      : '<p>Nothing is waiting for approval.</p>';
    const decidedHtml = decided.length
      ? `<table><caption>Decided</caption><thead><tr><th scope="col">Action</th><th scope="col">Decision</th><th scope="col">By</th><th scope="col">Execution</th><th scope="col">Digest</th></tr></thead><tbody>${decided
          .map(
            (a) =>
              `<tr><td>${esc(a.actionName)}</td><td>${esc(a.status)}</td><td>${esc(a.decidedBy)}</td><td data-execution>${esc(stepOf(a.id)?.status ?? '—')}</td><td><code>${esc(a.actionDigest)}</code></td></tr>`,
          )
          .join('')}</tbody></table>`
      : '';
    res.type('html').send(layout('Agent approvals', `<h2>Waiting for you</h2>${pendingHtml}${decidedHtml}`, r.viewer, r.flash));
  });

  post('/console/approvals/:id/approve', async (r, req, about) => {
    const form = req.body as Record<string, string>;
    about.subject = `Approval ${String(req.params.id)}`;
    const out = (await r.call('approveAgentAction', { id: req.params.id, expectedActionDigest: form.expectedActionDigest })) as {
      executeStep: { id: string };
    };
    return { text: `Approved. The agent may now execute exactly this action (step ${out.executeStep.id}).`, back: '/console/approvals' };
  });

  post('/console/approvals/:id/abandon', async (r, req, about) => {
    const form = req.body as Record<string, string>;
    about.subject = `Approval ${String(req.params.id)}`;
    await r.call('abandonAgentAction', { id: req.params.id, expectedActionDigest: form.expectedActionDigest, note: form.note });
    return { text: 'Abandoned: it can no longer be approved or executed.', back: '/console/approvals' };
  });
};
