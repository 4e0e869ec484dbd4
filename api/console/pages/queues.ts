import { requireStaff } from '../../../shared/staff/staff-access';
import { failingSubscriptions } from '../../../shared/webhooks/subscription-store';
import { isActiveOps } from '../../../shared/staff/ops-store';
import { SUPPLIER_QUEUES } from '../../../shared/queues/names';
import { esc, layout, postForm } from '../html';
import type { PageRegistrar } from '../routing';

const STATES = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;

/** Counts only (no job data: queues hold every tenant's work); the dashboard itself is for the ops role. */
export const queuePages: PageRegistrar = (_router, { get }, c) => {
  const { db, queueReads, staff } = c.api;
  get('/console/queues', async (r, _req, res) => {
    const member = await requireStaff(staff, r.principal);
    // A queue whose counts Redis does not give (late, or refused) shows as unavailable; the rest of the page stands.
    const counts = await Promise.all(
      SUPPLIER_QUEUES.map(async (name) => ({
        name,
        counts: await queueReads
          .get(name)
          .getJobCounts(...STATES)
          .catch((): null => null),
      })),
    );
    const ops = await isActiveOps(db, r.principal.userId);
    const table = `<table><caption>Supplier queues</caption><thead><tr><th scope="col">Queue</th>${STATES.map((s) => `<th scope="col">${s}</th>`).join('')}</tr></thead>
<tbody>${counts
      .map((q) =>
        q.counts
          ? `<tr${q.counts.failed ? ' class="attention"' : ''}><td>${esc(q.name)}</td>${STATES.map((s) => `<td>${esc(q.counts![s] ?? 0)}</td>`).join('')}</tr>`
          : `<tr class="attention"><td>${esc(q.name)}</td><td colspan="${STATES.length}">counts unavailable (Redis did not give them)</td></tr>`,
      )
      .join('')}</tbody></table>`;
    // Webhook receivers that stopped answering, of the clients this person is assigned: someone should call the client.
    const failing = await failingSubscriptions(db, member.assignedAdvertiserIds);
    const webhooks = failing.length
      ? `<table><caption>Failing webhook subscriptions</caption><thead><tr><th scope="col">Client</th><th scope="col">URL</th><th scope="col">Failing since</th><th scope="col">Subscription</th></tr></thead>
<tbody>${failing
          .map(
            (f) =>
              `<tr class="attention"><td>${esc(f.workspaceId)}</td><td>${esc(f.url)}</td><td>${esc(f.failingSince)}</td><td>${esc(f.id)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '<p>No webhook subscription of your clients is failing.</p>';
    const link = ops
      ? postForm(r.viewer, '/console/queues/dashboard', {}, '<button type="submit">Open the queue dashboard (bull-board)</button>')
      : '<p>The queue dashboard is for the ops role.</p>';
    res.type('html').send(layout('Queues', table + webhooks + link, r.viewer, r.flash));
  });
};
