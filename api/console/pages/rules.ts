import type { Rule, RuleDryRun, RuleFiring } from '../../../shared/rules/rule-schemas';
import type { ConsoleRequest } from '../context';
import { esc, json, layout, money } from '../html';
import type { PageRegistrar } from '../routing';
import { at } from '../time';

const OUTCOME_CLASS: Record<string, string> = {
  notified: 'ok',
  executed: 'ok',
  executing: 'attention',
  'awaiting-approval': 'attention',
  held: 'attention',
  failed: 'bad',
  'would-act': 'ok',
  'would-notify': 'ok',
  'would-ask': 'attention',
};

const outcome = (o: string) => `<span class="status ${OUTCOME_CLASS[o] ?? ''}">${esc(o)}</span>`;

/** What a firing did or would do, in words and money. */
function plannedText(p: RuleFiring['planned']): string {
  const seen = p.observed === null ? '' : ` (saw ${esc(p.observed)} through ${esc(p.through)})`;
  switch (p.action) {
    case 'move-budget':
      return `move ${p.amountMinor === null ? 'nothing' : money(p.amountMinor)} from line <code>${esc(p.lineId)}</code> to <code>${esc(p.toLineId ?? '—')}</code>${seen}`;
    case 'notify':
      return `notify${p.lineId ? ` on line <code>${esc(p.lineId)}</code>` : ''}${seen}`;
    default:
      return `${esc(p.action)} line <code>${esc(p.lineId)}</code>${seen}`;
  }
}

function conditionText(r: Rule): string {
  const c = r.condition;
  const what = c.metric === 'classification' ? `outlook is ${c.is}` : `${c.metric} ${c.operator} ${c.value}`;
  return `${esc(c.subject === 'line' ? 'a line’s' : 'the campaign’s')} ${esc(what)}, ${esc(c.forDays)} day(s) in a row`;
}

function guardrailsText(r: Rule): string {
  const g = r.guardrails;
  return `at most ${money(g.maxMovedPerDayMinor)} a day and ${money(g.maxMovedPerFlightMinor)} a flight; no line below ${money(g.minLineBudgetMinor)}; ${esc(g.cooldownDays)} day(s) cooldown${g.window ? `; window ${json(g.window)}` : ''}`;
}

function firingsTable(firings: RuleFiring[]): string {
  if (!firings.length) return '<p>It has not fired.</p>';
  const rows = firings
    .map(
      (f) =>
        `<tr><td>${esc(f.evaluationDay)}</td><td>${esc(f.mode)}</td><td data-outcome>${outcome(f.outcome)}${f.outcome === 'awaiting-approval' ? ' <a href="/console/approvals">needs a person’s approval</a>' : ''}</td><td>${plannedText(f.planned)}</td><td>${money(f.movedMinor)}</td><td>${esc(f.detail ?? '')}</td></tr>`,
    )
    .join('');
  return `<table><caption>Firings</caption><thead><tr><th scope="col">Day</th><th scope="col">Mode</th><th scope="col">Outcome</th><th scope="col">What</th><th scope="col">Moved</th><th scope="col">Detail</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function dryRunSection(d: RuleDryRun | undefined, z: string): string {
  if (!d) return '<p>No dry run yet: a rule is made active only after a dry run of its version.</p>';
  const rows = d.firings
    .map(
      (f) =>
        `<tr><td>${esc(f.day)}</td><td data-dry-outcome>${outcome(f.outcome)}</td><td>${plannedText(f.planned)}</td><td>${esc(f.detail ?? '')}</td></tr>`,
    )
    .join('');
  return `<p>Dry run of version ${esc(d.ruleVersion)} at ${at(d.createdAt, z)}, over ${esc(d.fromDay)} to ${esc(d.throughDay)}: it would have moved <strong data-dry-moved>${money(d.movedMinor)}</strong>.</p>
<table><caption>What it would have done</caption><thead><tr><th scope="col">Day</th><th scope="col">Outcome</th><th scope="col">What</th><th scope="col">Detail</th></tr></thead><tbody>${rows || '<tr><td colspan="4">Nothing.</td></tr>'}</tbody></table>`;
}

const ruleSummary = (r: Rule, z: string) =>
  `<tr><td><a href="/console/rules/${esc(r.id)}">${esc(r.name)}</a></td><td><code>${esc(r.campaignId)}</code></td><td data-mode>${esc(r.mode)}</td><td>${conditionText(r)}</td><td>${esc(r.action.kind)}</td><td>${r.lastFiring ? `${esc(r.lastFiring.evaluationDay)} ${outcome(r.lastFiring.outcome)}` : '—'}</td><td>${r.lastDryRun ? `${at(r.lastDryRun.createdAt, z)}: ${money(r.lastDryRun.movedMinor)}` : '—'}</td></tr>`;

async function rulePage(r: ConsoleRequest, id: string): Promise<string> {
  const { rule } = (await r.call('getRule', { id })) as unknown as { rule: Rule };
  const { firings } = (await r.call('listRuleFirings', { id, limit: 100 })) as unknown as { firings: RuleFiring[] };
  const { dryRuns } = (await r.call('listRuleDryRuns', { id, limit: 1 })) as unknown as { dryRuns: RuleDryRun[] };
  const z = r.viewer.timeZone;
  const mandate = rule.mandate
    ? `acts as agent <code>${esc(rule.agentClientId)}</code> under a mandate for ${esc(rule.mandate.allowedActions.join(', '))} up to ${money(rule.mandate.budgetCeilingMinor)} an action, granted by ${esc(rule.enabledBy ?? '—')}`
    : 'notify-only: it changes nothing';
  const body = `<p>Campaign <a href="/console/campaigns/${esc(rule.campaignId)}/delivery">${esc(rule.campaignId)}</a>, version ${esc(rule.version)}, <span data-mode>${esc(rule.mode)}</span>: ${mandate}.</p>
<dl><dt>When</dt><dd>${conditionText(rule)}</dd><dt>Then</dt><dd>${json(rule.action)}</dd><dt>Guardrails</dt><dd>${guardrailsText(rule)}</dd></dl>
<h2>Firings</h2>${firingsTable(firings)}<h2>Dry run</h2>${dryRunSection(dryRuns[0], z)}`;
  return layout(`Rule: ${rule.name}`, body, r.viewer, r.flash);
}

/** The workspace's automatic rules: each one's mode and mandate, its last firings and its dry runs. */
export const rulePages: PageRegistrar = (_router, { get }) => {
  get('/console/rules', async (r, _req, res) => {
    const { rules } = (await r.call('listRules', { limit: 100 })) as unknown as { rules: Rule[] };
    const z = r.viewer.timeZone;
    const body = rules.length
      ? `<table><caption>Rules</caption><thead><tr><th scope="col">Rule</th><th scope="col">Campaign</th><th scope="col">Mode</th><th scope="col">When</th><th scope="col">Then</th><th scope="col">Last firing</th><th scope="col">Last dry run</th></tr></thead><tbody>${rules.map((x) => ruleSummary(x, z)).join('')}</tbody></table>`
      : '<p>No rules yet. Write one with <code>POST /api/v1/rules</code>; it starts notify-only.</p>';
    res.type('html').send(layout('Automatic rules', body, r.viewer, r.flash));
  });
  get('/console/rules/:id', async (r, req, res) => {
    res.type('html').send(await rulePage(r, String(req.params.id)));
  });
};
