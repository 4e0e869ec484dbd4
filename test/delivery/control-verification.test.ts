import { decide, verificationSettingsFor } from '../../shared/delivery/control-verification';

/**
 * The verification rule itself (docs/bookings.md, "Verified control"), on hand-made days: what
 * proves a change, what contradicts it, and when it is too early to say. The paths that feed it
 * (polls, staff entry) are tested with real sellers in test/adcp/verified-control.test.ts.
 */
const settings = { reportingDelayHours: 6, tolerancePercent: 1 };
const change = (over: Partial<Parameters<typeof decide>[0]> = {}): Parameters<typeof decide>[0] => ({
  kind: 'stop',
  verification: 'pending',
  effective_at: new Date('2099-03-10T15:00:00Z'),
  budget_to_minor: null,
  end_date_to: null,
  line_budget_minor: '100000',
  drift: [],
  read_back: null,
  resumed_on: null,
  ...over,
});
const day = (date: string, spendMinor: number) => ({ day: date, spendMinor, impressions: spendMinor * 10 });
/** Reported through the 11th (a full day after the change), fetched after the delay. */
const reported = { fetchedAt: new Date('2099-03-12T07:00:00Z'), asOf: new Date('2099-03-11T23:59:59Z') };
const later = new Date('2099-03-12T08:00:00Z');

describe('a pause or stop', () => {
  test('is verified once a full day after its effective day is reported, after the delay, with nothing served', () => {
    const days = [day('2099-03-09', 5_000), day('2099-03-10', 2_500), day('2099-03-11', 0)];
    expect(decide(change(), days, later, reported, settings)).toMatchObject({ state: 'verified' });
  });

  test('is not decided before the delay has passed, nor on figures fetched before it, nor on figures that stop short', () => {
    const days = [day('2099-03-10', 2_500)];
    expect(decide(change(), days, new Date('2099-03-12T05:59:00Z'), reported, settings)).toBeNull();
    expect(decide(change(), days, later, { ...reported, fetchedAt: new Date('2099-03-12T05:00:00Z') }, settings)).toBeNull();
    expect(decide(change(), days, later, { ...reported, asOf: new Date('2099-03-10T23:59:59Z') }, settings)).toBeNull();
    expect(decide(change(), days, later, { fetchedAt: null, asOf: null }, settings)).toBeNull();
  });

  test('fails on spend after its effective day beyond the tolerance, and only beyond it, at once, before any delay', () => {
    // 1% of a 1,000.00 line is 10.00.
    const early = new Date('2099-03-11T10:00:00Z');
    expect(decide(change(), [day('2099-03-11', 1_000)], early, reported, settings)).toBeNull();
    const failed = decide(change(), [day('2099-03-11', 1_001)], early, reported, settings);
    expect(failed).toMatchObject({
      state: 'failed',
      evidence: { reason: 'delivered after the stop', spentMinor: 1_001, toleranceMinor: 1_000 },
    });
    // The effective day itself may carry what was in flight.
    expect(decide(change(), [day('2099-03-10', 50_000)], early, reported, settings)).toBeNull();
  });

  test('on the final figures (at closeout) it is decided whatever the delay: verified when they agree, failed when they do not', () => {
    const early = new Date('2099-03-11T01:00:00Z');
    const unreported = { fetchedAt: null, asOf: null };
    expect(decide(change(), [day('2099-03-10', 2_500)], early, unreported, settings)).toBeNull();
    expect(decide(change(), [day('2099-03-10', 2_500)], early, { ...unreported, final: true }, settings)).toMatchObject({
      state: 'verified',
      evidence: { reason: 'the final figures agree', final: true },
    });
    expect(decide(change(), [day('2099-03-11', 5_000)], early, { ...unreported, final: true }, settings)).toMatchObject({
      state: 'failed',
      evidence: { reason: 'delivered after the stop' },
    });
    // A pause resumed the next day is superseded, final figures or not.
    expect(decide(change({ kind: 'pause', resumed_on: '2099-03-11' }), [], early, { ...unreported, final: true }, settings)).toMatchObject({
      state: 'superseded',
    });
  });

  test('a verified stop still fails when a restatement later shows delivery after it', () => {
    expect(decide(change({ verification: 'verified' }), [day('2099-03-11', 0)], later, reported, settings)).toBeNull();
    expect(decide(change({ verification: 'verified' }), [day('2099-03-13', 9_000)], later, reported, settings)).toMatchObject({
      state: 'failed',
    });
  });

  test('a read-back that disagrees fails it at once, with what the seller showed', () => {
    const d = decide(
      change({ drift: ['asked to stop; the seller shows active'], read_back: { status: 'active' } }),
      [],
      later,
      reported,
      settings,
    );
    expect(d).toMatchObject({ state: 'failed', evidence: { reason: 'read-back', sellerShows: { status: 'active' } } });
  });

  test('a pause is watched until its resume: delivery after the resume is the resume’s, and a resume the next day supersedes it', () => {
    const pause = change({ kind: 'pause', resumed_on: '2099-03-13' });
    expect(decide(pause, [day('2099-03-13', 9_000), day('2099-03-14', 9_000)], later, reported, settings)).toMatchObject({
      state: 'verified',
    });
    expect(decide(pause, [day('2099-03-12', 9_000)], later, reported, settings)).toMatchObject({ state: 'failed' });
    expect(decide(change({ kind: 'pause', resumed_on: '2099-03-11' }), [], later, reported, settings)).toMatchObject({
      state: 'superseded',
    });
  });
});

describe('a budget or end-date change', () => {
  const cut = change({ kind: 'change-budget', budget_to_minor: '40000' });

  test('fails when the line has spent beyond the new budget and the tolerance', () => {
    expect(decide(cut, [day('2099-03-09', 20_000), day('2099-03-11', 21_000)], later, reported, settings)).toMatchObject({
      state: 'verified',
    });
    expect(decide(cut, [day('2099-03-09', 20_000), day('2099-03-11', 21_001)], later, reported, settings)).toMatchObject({
      state: 'failed',
      evidence: { reason: 'delivered beyond the new budget', budgetMinor: 40_000, totalSpendMinor: 41_001 },
    });
  });

  test('a new end date fails on delivery after it, and is verified only once the day after it is reported', () => {
    const moved = change({ kind: 'change-budget', budget_to_minor: '100000', end_date_to: '2099-03-12' });
    expect(decide(moved, [day('2099-03-11', 5_000)], later, reported, settings)).toBeNull();
    const after = { fetchedAt: new Date('2099-03-14T07:00:00Z'), asOf: new Date('2099-03-13T23:59:59Z') };
    expect(decide(moved, [day('2099-03-12', 5_000)], new Date('2099-03-14T08:00:00Z'), after, settings)).toMatchObject({
      state: 'verified',
    });
    expect(decide(moved, [day('2099-03-13', 5_000)], new Date('2099-03-14T08:00:00Z'), after, settings)).toMatchObject({
      state: 'failed',
      evidence: { reason: 'delivered after the new end date' },
    });
  });
});

test("each supplier's reporting delay: the sandbox's own at once, an AdCP seller's as configured, others the deployment's", () => {
  const config = {
    CONTROL_TOLERANCE_PERCENT: 2,
    CONTROL_REPORTING_DELAY_HOURS: 6,
    ADCP_SELLERS: [{ key: 'lax', reportingDelayHours: 24 }],
  };
  expect(verificationSettingsFor(config, { key: 'sandbox-ctv', kind: 'sandbox' })).toEqual({ reportingDelayHours: 0, tolerancePercent: 2 });
  expect(verificationSettingsFor(config, { key: 'adcp-lax', kind: 'adcp' })).toEqual({ reportingDelayHours: 24, tolerancePercent: 2 });
  expect(verificationSettingsFor(config, { key: 'manual', kind: 'workflow' })).toEqual({ reportingDelayHours: 6, tolerancePercent: 2 });
});
