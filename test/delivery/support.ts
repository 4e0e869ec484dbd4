import type { TestEnv } from '../support/api';
import { settleDelivery } from '../../shared/delivery/delivery-money';
import { markFetched, recordDelivery } from '../../shared/delivery/delivery-store';
import { SYSTEM } from '../../shared/auth/actor';
import type { DeliveryDay } from '../../shared/adapters/adapter';
import { changeLine } from '../../shared/bookings/lines/store';

export const day = (date: string, spendMinor: number, impressions = spendMinor): DeliveryDay => ({
  date,
  impressions,
  clicks: Math.floor(impressions / 100),
  completions: 0,
  spendMinor,
});

/** A supplier report for one live line, stored and its money settled, as the poller does. */
export async function report(env: TestEnv, line: { lineId: string; bookingId: string; advertiserId: string }, days: DeliveryDay[]) {
  const asOf = new Date().toISOString();
  return env.db.transaction(async (trx) => {
    const recorded = await recordDelivery(trx, [{ line, report: { asOf, days } }], { kind: 'supplier' });
    const moved = await settleDelivery(trx, line.lineId, SYSTEM.actorId);
    await markFetched(trx, [{ lineId: line.lineId, asOf }]);
    return { ...recorded, moved };
  });
}

/** Confirms live lines as a supplier's answer would. */
export async function confirmLines(env: TestEnv, bookingId: string, lineIds: string[]) {
  for (const lineId of lineIds) {
    await env.db.transaction(async (trx) => {
      await changeLine(trx, { bookingId, lineId, to: 'in-progress', actor: SYSTEM, action: 'test.start' });
      await changeLine(trx, {
        bookingId,
        lineId,
        to: 'confirmed',
        actor: SYSTEM,
        action: 'test.confirm',
        patch: { confirmed_at: new Date() },
      });
    });
  }
}
