import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { actorOf } from '../auth/actor';
import type { Principal } from '../auth/principal';
import { dateOnly } from '../dates';
import { toMinor } from '../db/knex';
import { badRequest, conflict, notFound } from '../errors';
import { recordEvent } from '../events/record';
import { isUuid } from '../ids';
import { lockWallet, periodOf, post } from '../wallet/ledger';
import { clockedNow, readOffsetDays } from '../workspaces/sandbox-clock';
import { makegoodView, MakegoodSchema } from '../delivery/makegoods';
import { invoiceLineView, InvoiceLineSchema, REMEDIES } from './reconciliation-views';

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD');
const Amount = z.number().int().min(0).max(1_000_000_000_000);

export const ResolveDisputeSchema = z
  .strictObject({
    /** The invoice line's version as shown: a line changed since is refused (409). */
    expectedVersion: z.number().int().min(1),
    remedy: z.enum(REMEDIES),
    /** Why: recorded with who decided. */
    reason: z.string().min(3).max(2000),
    /** `credit`: the seller's credit; `invoice_adjustment`: the line's amount as the seller reissues it. */
    amountMinor: Amount.optional(),
    /** `additional_delivery`: impressions owed, or their value (converted at the month's final cost per impression). */
    owedImpressions: z.number().int().min(1).max(1_000_000_000_000).optional(),
    owedValueMinor: z.number().int().min(1).max(1_000_000_000_000).optional(),
    /** `additional_delivery`: the last day the make-good may run. */
    dueBy: Day.optional(),
  })
  .superRefine((b, ctx) => {
    const needs = (field: keyof typeof b, when: boolean, why: string) => {
      if (when) ctx.addIssue({ code: 'custom', path: [field], message: why });
    };
    const money = b.remedy === 'credit' || b.remedy === 'invoice_adjustment';
    needs('amountMinor', money && b.amountMinor === undefined, `${b.remedy} needs amountMinor`);
    needs('amountMinor', !money && b.amountMinor !== undefined, `amountMinor goes with credit or invoice_adjustment only`);
    needs('amountMinor', b.remedy === 'credit' && b.amountMinor === 0, 'a credit is at least 1');
    const makegood = b.remedy === 'additional_delivery';
    needs('dueBy', makegood && b.dueBy === undefined, 'additional_delivery needs dueBy');
    needs(
      'owedImpressions',
      makegood && (b.owedImpressions === undefined) === (b.owedValueMinor === undefined),
      'additional_delivery needs owedImpressions or owedValueMinor (one of them)',
    );
    for (const f of ['dueBy', 'owedImpressions', 'owedValueMinor'] as const) {
      needs(f, !makegood && b[f] !== undefined, `${f} goes with additional_delivery only`);
    }
  });
export type ResolveDispute = z.infer<typeof ResolveDisputeSchema>;

export const ResolvedEnvelope = z
  .object({ line: InvoiceLineSchema, makegood: MakegoodSchema.nullable() })
  .meta({ id: 'ResolvedInvoiceLine' });

/**
 * A person resolves a disputed invoice line with one remedy, recorded with who and why
 * (docs/billing.md, Disputes): `credit` is one `seller_credit` ledger entry (money back to the
 * wallet), `invoice_adjustment` one `invoice_adjustment` entry (what the seller took off); both
 * keyed by the invoice line, so a remedy never moves money twice; `additional_delivery` owes a
 * make-good; `accepted` pays the invoice as it stands. Sandbox lines move no money: their remedy
 * is recorded without a ledger entry. A line not disputed, or changed since it was shown, is 409.
 */
export async function resolveDispute(
  db: Knex,
  p: Principal,
  invoiceId: string,
  invoiceLineId: string,
  b: ResolveDispute,
  real = new Date(),
) {
  if (!isUuid(invoiceId) || !isUuid(invoiceLineId)) throw notFound();
  const actor = actorOf(p);
  return db.transaction(async (trx) => {
    const line = await trx('invoice_lines as il')
      .join('invoices as i', 'i.id', 'il.invoice_id')
      .join('booking_lines as l', 'l.id', 'il.line_id')
      .where({ 'il.id': invoiceLineId.toLowerCase(), 'il.invoice_id': invoiceId.toLowerCase(), 'il.advertiser_id': p.advertiserId })
      .forUpdate('il')
      .first('il.*', 'i.adapter_key', 'i.invoice_number', 'l.execution_mode');
    if (!line) throw notFound();
    if (line.status !== 'disputed')
      throw conflict(`This invoice line is ${line.status}, not disputed: there is nothing to resolve.`, 'not_disputed');
    if (line.version !== b.expectedVersion) {
      throw conflict(`The invoice line is at version ${line.version}, not ${b.expectedVersion}: read it again.`, 'version_conflict');
    }
    const invoiced = toMinor(line.amount_minor);
    if (b.remedy === 'credit' && b.amountMinor! > invoiced) {
      throw badRequest(`A credit cannot exceed the line's invoiced ${invoiced}.`, [
        { path: 'body.amountMinor', message: 'more than invoiced' },
      ]);
    }
    if (b.remedy === 'invoice_adjustment' && b.amountMinor! >= invoiced) {
      throw badRequest(`The reissued amount must be below the invoiced ${invoiced}.`, [
        { path: 'body.amountMinor', message: 'not below invoiced' },
      ]);
    }
    const mode = line.execution_mode as 'sandbox' | 'live';
    let owedImpressions = b.owedImpressions ?? 0;
    let today = '';
    if (b.remedy === 'additional_delivery') {
      today = dateOnly(clockedNow(mode, await readOffsetDays(trx, p.advertiserId), real));
      if (b.dueBy! <= today)
        throw badRequest(`dueBy must be after today (${today}).`, [{ path: 'body.dueBy', message: 'not in the future' }]);
      if (b.owedValueMinor !== undefined) {
        const finalMinor = toMinor(line.final_minor);
        const finalImpressions = toMinor(line.final_impressions);
        if (finalMinor === 0 || finalImpressions === 0) {
          throw badRequest('The month delivered nothing to price impressions by: give owedImpressions.', [
            { path: 'body.owedValueMinor', message: 'no final cost per impression' },
          ]);
        }
        owedImpressions = Number((BigInt(b.owedValueMinor) * BigInt(finalImpressions) + BigInt(finalMinor) - 1n) / BigInt(finalMinor));
      }
    }

    let ledger: { kind: 'seller_credit' | 'invoice_adjustment'; amountMinor: number } | null = null;
    if (b.remedy === 'credit') ledger = { kind: 'seller_credit', amountMinor: b.amountMinor! };
    if (b.remedy === 'invoice_adjustment') ledger = { kind: 'invoice_adjustment', amountMinor: invoiced - b.amountMinor! };
    let ledgerEntryId: string | null = null;
    if (ledger && mode === 'live') {
      await lockWallet(trx, p.advertiserId);
      const posted = await post(trx, {
        advertiserId: p.advertiserId,
        kind: ledger.kind,
        amountMinor: ledger.amountMinor,
        subjectType: 'invoice_line',
        subjectId: line.id,
        bookingId: line.booking_id,
        lineId: line.line_id,
        actorId: actor.actorId,
        period: periodOf(real),
        detail: { invoiceId: line.invoice_id, invoiceNumber: line.invoice_number, remedy: b.remedy, reason: b.reason },
      });
      if (!posted) throw conflict('This invoice line’s remedy has already moved money.', 'remedy_already_applied');
      const entry = await trx('wallet_entries').where({ subject_type: 'invoice_line', subject_id: line.id }).first('id');
      ledgerEntryId = String(entry.id);
    }
    const [updated] = await trx('invoice_lines')
      .where({ id: line.id, version: line.version, status: 'disputed' })
      .update({
        status: 'resolved',
        remedy: b.remedy,
        remedy_amount_minor: b.amountMinor ?? b.owedValueMinor ?? null,
        reason: b.reason,
        resolved_by: actor.actorId,
        resolved_at: trx.fn.now(),
        ledger_entry_id: ledgerEntryId,
        version: line.version + 1,
      })
      .returning('*');
    const stillDisputed = await trx('invoice_lines').where({ invoice_id: line.invoice_id, status: 'disputed' }).first('id');
    const [invoice] = await trx('invoices')
      .where({ id: line.invoice_id })
      .update({ status: stillDisputed ? 'disputed' : 'resolved', version: trx.raw('version + 1') })
      .returning(['version']);
    await recordEvent(trx, {
      workspaceId: p.advertiserId,
      type: 'invoice.resolved',
      subjectId: line.id,
      subjectVersion: updated.version,
      body: {
        invoiceId: line.invoice_id,
        invoiceVersion: invoice.version,
        lineId: line.line_id,
        remedy: b.remedy,
        amountMinor: b.amountMinor ?? null,
        resolvedBy: actor.actorId,
      },
    });
    let makegood = null;
    if (b.remedy === 'additional_delivery') {
      const [row] = await trx('makegoods')
        .insert({
          id: randomUUID(),
          advertiser_id: p.advertiserId,
          invoice_line_id: line.id,
          line_id: line.line_id,
          booking_id: line.booking_id,
          adapter_key: line.adapter_key,
          owed_impressions: owedImpressions,
          owed_value_minor: b.owedValueMinor ?? null,
          // Zero-cost delivery from the day of the decision on counts towards it.
          from_day: today,
          due_by: b.dueBy,
          created_by: actor.actorId,
        })
        .returning('*');
      makegood = makegoodView(row);
      await recordEvent(trx, {
        workspaceId: p.advertiserId,
        type: 'makegood.owed',
        subjectId: makegood.id,
        subjectVersion: 1,
        body: { lineId: makegood.lineId, seller: makegood.seller, owedImpressions, dueBy: makegood.dueBy, invoiceLineId: line.id },
      });
    }
    return { line: invoiceLineView(updated), makegood };
  });
}
