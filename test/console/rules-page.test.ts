import { createTestEnv, type TestEnv } from '../support/api';
import { startConsoleService, type ConsoleService } from './support';
import { post } from '../support/bookings';
import { addDays } from '../../shared/dates';
import { recordDelivery } from '../../shared/delivery/delivery-store';
import { evaluateRules } from '../../shared/rules/rule-evaluation';
import { day } from '../delivery/support';

let env: TestEnv;
let service: ConsoleService;
beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
});
afterAll(() => env.close());

test("the console lists a workspace's rules with their mode and last firing, and a rule's page shows its firings and its stored dry run; another workspace's rule is not found", async () => {
  const org = 'org-rules-console';
  const today = new Date().toISOString().slice(0, 10);
  const booking = await service.launch(org, [{ channel: 'ctv', adapterKey: 'manual', budgetMinor: 31_000 }], undefined, {
    name: 'Rules at the console',
    startDate: today,
    endDate: addDays(today, 9),
  });
  const line = booking.lines[0]!;
  // Staff booked it by hand and entered three days (the fulfilment flow is tested elsewhere).
  await env
    .db('booking_lines')
    .where({ id: line.id })
    .update({ status: 'confirmed', confirmed_at: new Date(), execution_method: 'manual' });
  await env.db.transaction((trx) =>
    recordDelivery(
      trx,
      [
        {
          line: { lineId: line.id, bookingId: booking.id, advertiserId: org },
          report: { asOf: new Date().toISOString(), days: [0, 1, 2].map((k) => day(addDays(today, k), 3_000)) },
        },
      ],
      { kind: 'staff', actorId: 'stan' },
    ),
  );
  const buyer = await service.token({ org, user: `${org}-buyer` });
  expect((await post(service.api, buyer, '/api/v1/sandbox/clock/advance', { days: 3 })).status).toBe(200);
  const created = await post(service.api, buyer, '/api/v1/rules', {
    name: 'Tell me when it spends',
    campaignId: booking.campaignId,
    condition: { subject: 'line', metric: 'delivered-spend-minor', operator: 'above', value: 0 },
    action: { kind: 'notify' },
    guardrails: { maxMovedPerDayMinor: 0, maxMovedPerFlightMinor: 0, minLineBudgetMinor: 0, cooldownDays: 0 },
  });
  expect(created.status).toBe(201);
  const { rule } = (await created.json()) as { rule: { id: string } };
  expect((await post(service.api, buyer, `/api/v1/rules/${rule.id}/dry-runs`, {})).status).toBe(201);
  await evaluateRules(env.db, { tolerance: 0.15, pollEveryMs: 3_600_000, advertiserId: org });

  const browser = await service.signIn({ user: `${org}-buyer`, workspace: org });
  const list = await browser.page('/console/rules');
  expect(list.status).toBe(200);
  expect(list.html).toContain(`href="/console/rules/${rule.id}"`);
  expect(list.html).toContain('Tell me when it spends');
  expect(list.html).toMatch(/data-mode>notify-only</);
  expect(list.html).toContain(`${addDays(today, 3)} <span class="status ok">notified</span>`);
  expect(list.html).not.toMatch(/<script/i);

  const page = await browser.page(`/console/rules/${rule.id}`);
  expect(page.status).toBe(200);
  expect(page.html.match(/data-outcome>/g)).toHaveLength(1);
  // The dry run over the days before today: each day after the first would have told.
  expect(page.html.match(/data-dry-outcome><span class="status ok">would-notify/g)).toHaveLength(3);
  expect(page.html).toContain('notify-only: it changes nothing');

  const other = await service.signIn({ user: 'eve', workspace: 'org-other' });
  expect((await other.page(`/console/rules/${rule.id}`)).status).toBe(404);
  expect((await other.page('/console/rules')).html).not.toContain(rule.id);
});

test("a rule's move beyond its mandate waits at Agent approvals, named as the rule's, and is marked on the rule's page as needing a person", async () => {
  const org = 'org-rules-ask';
  const today = new Date().toISOString().slice(0, 10);
  const booking = await service.launch(
    org,
    [
      { channel: 'ctv', adapterKey: 'manual', budgetMinor: 30_000 },
      { channel: 'ctv', adapterKey: 'manual', budgetMinor: 30_000 },
    ],
    undefined,
    { name: 'Rules asking', startDate: today, endDate: addDays(today, 9) },
  );
  const [giver, taker] = booking.lines as [(typeof booking.lines)[0], (typeof booking.lines)[0]];
  await env
    .db('booking_lines')
    .whereIn('id', [giver.id, taker.id])
    .update({ status: 'confirmed', confirmed_at: new Date(), execution_method: 'manual' });
  // Three days entered: the first line at a third of its pace, the second at its pace.
  await env.db.transaction((trx) =>
    recordDelivery(
      trx,
      [
        [giver.id, 1_000],
        [taker.id, 3_000],
      ].map(([lineId, spend]) => ({
        line: { lineId: lineId as string, bookingId: booking.id, advertiserId: org },
        report: { asOf: new Date().toISOString(), days: [0, 1, 2].map((k) => day(addDays(today, k), spend as number)) },
      })),
      { kind: 'staff', actorId: 'stan' },
    ),
  );
  const lead = await service.token({ org, user: `${org}-lead`, permissions: ['agent:approve'] });
  expect((await post(service.api, lead, '/api/v1/sandbox/clock/advance', { days: 3 })).status).toBe(200);
  const created = await post(service.api, lead, '/api/v1/rules', {
    name: 'Move off the slow line',
    campaignId: booking.campaignId,
    condition: { subject: 'line', metric: 'projected-under-delivery-percent', operator: 'above', value: 15 },
    action: { kind: 'move-budget', amountMinor: 2_000 },
    guardrails: { maxMovedPerDayMinor: 2_000, maxMovedPerFlightMinor: 2_000, minLineBudgetMinor: 0, cooldownDays: 0 },
  });
  const { rule } = (await created.json()) as { rule: { id: string; version: number } };
  expect((await post(service.api, lead, `/api/v1/rules/${rule.id}/dry-runs`, {})).status).toBe(201);
  const enabled = await post(
    service.api,
    lead,
    `/api/v1/rules/${rule.id}`,
    { expectedVersion: rule.version, mode: 'active', mandate: { budgetCeilingMinor: 1_000 } },
    'PATCH',
  );
  expect(enabled.status).toBe(200);
  await evaluateRules(env.db, { tolerance: 0.15, pollEveryMs: 3_600_000, advertiserId: org });
  const firing = await env.db('rule_firings').where({ rule_id: rule.id }).first();
  expect([firing.subject_id, firing.outcome, firing.planned.toLineId]).toEqual([giver.id, 'awaiting-approval', taker.id]);

  const browser = await service.signIn({ user: `${org}-lead`, workspace: org, permissions: ['agent:approve'] });
  const approvals = await browser.page('/console/approvals');
  expect(approvals.html).toContain(`<a href="/console/rules/${rule.id}" data-rule>Move off the slow line</a>: beyond its mandate`);
  expect(approvals.html).toContain(`/console/approvals/${String(firing.approval_id)}/approve`);
  const page = await browser.page(`/console/rules/${rule.id}`);
  expect(page.html).toContain('awaiting-approval</span> <a href="/console/approvals">needs a person’s approval</a>');
});
