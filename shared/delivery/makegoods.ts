import type { Knex } from 'knex';
import { z } from 'zod';
import type { Principal } from '../auth/principal';
import { toMinor } from '../db/knex';
import { recordEvent } from '../events/record';

const Money = z.number().int();

/** A make-good a seller owes (docs/billing.md, Make-goods): impressions at no cost, by a date. */

export const MakegoodSchema = z.object({
  id: z.uuid(),
  invoiceLineId: z.uuid(),
  lineId: z.uuid(),
  bookingId: z.uuid(),
  seller: z.string(),
  owedImpressions: Money,
  owedValueMinor: Money.nullable(),
  deliveredImpressions: Money,
  fromDay: z.string(),
  dueBy: z.string(),
  status: z.enum(['owed', 'fulfilled', 'expired']),
  version: z.number().int(),
  createdBy: z.string(),
  createdAt: z.string(),
});
export type MakegoodView = z.infer<typeof MakegoodSchema>;

export function makegoodView(r: Record<string, unknown>): MakegoodView {
  return {
    id: String(r.id),
    invoiceLineId: String(r.invoice_line_id),
    lineId: String(r.line_id),
    bookingId: String(r.booking_id),
    seller: String(r.adapter_key),
    owedImpressions: toMinor(r.owed_impressions as string),
    owedValueMinor: r.owed_value_minor === null ? null : toMinor(r.owed_value_minor as string),
    deliveredImpressions: toMinor(r.delivered_impressions as string),
    fromDay: String(r.from_day),
    dueBy: String(r.due_by),
    status: r.status as MakegoodView['status'],
    version: Number(r.version),
    createdBy: String(r.created_by),
    createdAt: (r.created_at as Date).toISOString(),
  };
}

interface MakegoodRow {
  id: string;
  advertiser_id: string;
  line_id: string;
  adapter_key: string;
  owed_impressions: string;
  delivered_impressions: string;
  from_day: string;
  due_by: string;
  status: 'owed' | 'fulfilled' | 'expired';
  version: number;
}

/**
 * Later delivery at no cost burns make-goods down (docs/billing.md, Make-goods): each zero-spend
 * day of the line between a make-good's decision and its due date counts its impressions, oldest
 * make-good first (one a line met earlier keeps what it took). A make-good whose impressions are
 * all delivered is fulfilled, and subscribers are told (`makegood.fulfilled`). Returns how many.
 */
export async function burnDownMakegoods(trx: Knex, lineIds: readonly string[]): Promise<number> {
  if (!lineIds.length) return 0;
  const goods = (await trx('makegoods')
    .whereIn('line_id', [...new Set(lineIds)])
    .whereIn('line_id', trx('makegoods').where({ status: 'owed' }).select('line_id'))
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .forUpdate()
    .select('*')) as MakegoodRow[];
  if (!goods.length) return 0;
  const days = (await trx('delivery_days')
    .whereIn('line_id', [...new Set(goods.map((g) => g.line_id))])
    .where('spend_minor', 0)
    .where('impressions', '>', 0)
    .where(
      'day',
      '>=',
      goods.reduce((m, g) => (g.from_day < m ? g.from_day : m), goods[0]!.from_day),
    )
    .orderBy(['line_id', 'day'])
    .select('line_id', 'day', 'impressions')) as Array<{ line_id: string; day: string; impressions: string }>;
  let fulfilled = 0;
  for (const lineId of new Set(goods.map((g) => g.line_id))) {
    const mine = goods.filter((g) => g.line_id === lineId);
    // What each make-good may take: a met one its owed impressions, an expired one what it had.
    const room = mine.map((g) =>
      g.status === 'owed'
        ? toMinor(g.owed_impressions)
        : g.status === 'fulfilled'
          ? toMinor(g.owed_impressions)
          : toMinor(g.delivered_impressions),
    );
    const got = mine.map(() => 0);
    for (const d of days.filter((x) => x.line_id === lineId)) {
      let left = toMinor(d.impressions);
      mine.forEach((g, i) => {
        if (left <= 0 || d.day < g.from_day || d.day > g.due_by || got[i]! >= room[i]!) return;
        const take = Math.min(left, room[i]! - got[i]!);
        got[i] = got[i]! + take;
        left -= take;
      });
    }
    for (const [i, g] of mine.entries()) {
      if (g.status !== 'owed' || got[i] === toMinor(g.delivered_impressions)) continue;
      const met = got[i]! >= toMinor(g.owed_impressions);
      const [row] = await trx('makegoods')
        .where({ id: g.id, status: 'owed' })
        .update({
          delivered_impressions: got[i],
          ...(met ? { status: 'fulfilled', fulfilled_at: trx.fn.now(), version: g.version + 1 } : {}),
        })
        .returning('*');
      if (met && row) {
        fulfilled++;
        await recordEvent(trx, {
          workspaceId: g.advertiser_id,
          type: 'makegood.fulfilled',
          subjectId: g.id,
          subjectVersion: row.version,
          body: { lineId, seller: g.adapter_key, owedImpressions: toMinor(g.owed_impressions), deliveredImpressions: got[i]! },
        });
      }
    }
  }
  return fulfilled;
}

// Owed make-goods a whole day past their due date on the line's clock (a day's delivery is reported the day after it).
const EXPIRE = `
update makegoods m set status = 'expired', expired_at = now(), version = m.version + 1
  from booking_lines l left join sandbox_clocks sc on sc.advertiser_id = l.advertiser_id
 where m.line_id = l.id and m.status = 'owed'
   and (?::text is null or m.adapter_key = ?) and (?::text is null or m.advertiser_id = ?)
   and m.due_by + 1 < ((?::timestamptz at time zone 'utc') + make_interval(days => case when l.execution_mode = 'sandbox'
         then coalesce(sc.offset_days, 0) else 0 end))::date
returning m.*`;

/** Make-goods past their date unmet are flagged expired, and subscribers told (`makegood.expired`), once. */
export async function expireMakegoods(
  db: Knex,
  filter: { adapterKey?: string; advertiserId?: string } = {},
  real = new Date(),
): Promise<number> {
  return db.transaction(async (trx) => {
    const seller = filter.adapterKey ?? null;
    const who = filter.advertiserId ?? null;
    const { rows } = await trx.raw(EXPIRE, [seller, seller, who, who, real.toISOString()]);
    for (const r of rows as Array<Record<string, unknown>>) {
      const m = makegoodView(r);
      await recordEvent(trx, {
        workspaceId: String(r.advertiser_id),
        type: 'makegood.expired',
        subjectId: m.id,
        subjectVersion: m.version,
        body: {
          lineId: m.lineId,
          seller: m.seller,
          owedImpressions: m.owedImpressions,
          deliveredImpressions: m.deliveredImpressions,
          dueBy: m.dueBy,
        },
      });
    }
    return rows.length;
  });
}

export const MakegoodQuerySchema = z.strictObject({ status: z.enum(['owed', 'fulfilled', 'expired']).optional() });
export const MakegoodListEnvelope = z.object({ makegoods: z.array(MakegoodSchema) }).meta({ id: 'MakegoodList' });

/** The workspace's make-goods, newest first (at most 500). */
export async function listMakegoods(db: Knex, p: Principal, q: z.infer<typeof MakegoodQuerySchema>) {
  const rows = await db('makegoods')
    .where({ advertiser_id: p.advertiserId })
    .modify((x) => (q.status ? x.where({ status: q.status }) : x))
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }])
    .limit(500);
  return { makegoods: rows.map(makegoodView) };
}
