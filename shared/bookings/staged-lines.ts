import type { Knex } from 'knex';
import { SYSTEM } from '../auth/actor';
import { lineEnableable } from '../creatives/creative-approvals';
import type { CreativeRef } from '../creatives/creative-schemas';
import { changeLine, lockLine } from './lines/store';

/**
 * Native staged lines waiting on this creative may become enableable once it is approved.
 * They change through changeLine like any line, in the global lock order: all the lines first
 * (by booking, then id), then each one's booking as it changes, so bookings too are locked in
 * id order, as a batch of worker steps locks them.
 */
export async function refreshStagedLines(trx: Knex, creativeId: string): Promise<void> {
  const lines = await trx('booking_lines')
    .where({ adapter_key: 'native-staged', status: 'stopped', enableable: false })
    .whereRaw('creatives @> ?::jsonb', [JSON.stringify([{ id: creativeId }])])
    .orderBy(['booking_id', 'id'])
    .forUpdate()
    .select('id', 'booking_id');
  for (const { id, booking_id: bookingId } of lines) {
    const locked = await lockLine(trx, bookingId, id);
    if (!locked || locked.line.status !== 'stopped' || locked.line.enableable) continue;
    if (!(await lineEnableable(trx, locked.line as unknown as { adapter_key: string; creatives: CreativeRef[] }))) continue;
    await changeLine(trx, {
      bookingId,
      lineId: id,
      patch: { enableable: true },
      actor: SYSTEM,
      action: 'line.enableable',
      detail: { creativeId },
    });
  }
}
