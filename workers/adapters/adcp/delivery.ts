import type { AdapterContext, DeliveryDay, DeliveryReport, DeliveryReporter, LineAtSupplier } from '../../../shared/adapters/adapter';
import { sellerAccountOf } from '../../../shared/adapters/credentials';
import { accountRef } from '../../../shared/adapters/adcp/account-ref';
import type { AdcpSellerConnection } from '../../../shared/adapters/adcp/connection';
import { parseAdcpReference } from '../../../shared/adapters/adcp/outcomes';
import { heldDelivery } from '../../../shared/delivery/delivery-store';

interface Figures {
  impressions?: number;
  spend?: number;
  clicks?: number;
  completed_views?: number;
}
interface RawDay extends Figures {
  date: string;
}
interface RawDelivery {
  reporting_period?: { start?: string; end?: string };
  media_buy_deliveries?: Array<{
    media_buy_id: string;
    totals?: Figures;
    daily_breakdown?: RawDay[];
    by_package?: Array<Figures & { package_id: string; daily_breakdown?: RawDay[]; is_final?: boolean }>;
  }>;
}

/** A seller's amount (major units) in minor units, rounded to the nearest. */
const toMinor = (amount: number | undefined) => Math.round((amount ?? 0) * 100);
const whole = (n: number | undefined) => Math.round(n ?? 0);
const dayOf = (iso: string | undefined) => (iso && /^\d{4}-\d{2}-\d{2}/.test(iso) ? iso.slice(0, 10) : null);

/**
 * A seller that reports totals only (no daily breakdown, whatever it was asked: the SDK's example
 * sellers do, and so does Prebid's Sales Agent): the totals run from the start of its reporting
 * period (the flight's start, asked for, or its own) to now, so the day they are filed under (the
 * last day they cover, within the days asked) gets what they grew by beyond the days already held
 * in that period. A later restatement of an earlier day lands on the day it is seen. Totals that
 * fell below what is held cannot be split by day: the fetch fails with why, for a person to see.
 */
async function totalsAsDay(
  line: LineAtSupplier,
  fromDate: string,
  toDate: string,
  raw: RawDelivery,
  totals: Figures,
  ctx: AdapterContext,
): Promise<DeliveryDay[]> {
  const periodStart = [line.startDate, dayOf(raw.reporting_period?.start) ?? line.startDate].sort().at(-1)!;
  const periodEnd = dayOf(raw.reporting_period?.end) ?? toDate;
  const day = [fromDate, [toDate, periodEnd].sort()[0]!].sort().at(-1)!;
  const held = await heldDelivery(ctx.db, line.lineId, periodStart, day);
  const figure = {
    date: day,
    impressions: whole(totals.impressions) - held.impressions,
    clicks: whole(totals.clicks) - held.clicks,
    completions: whole(totals.completed_views) - held.completions,
    spendMinor: toMinor(totals.spend) - held.spendMinor,
  };
  const fell = (['impressions', 'clicks', 'completions', 'spendMinor'] as const).filter((k) => figure[k] < 0);
  if (fell.length) {
    throw new Error(
      `The seller's totals to ${day} are below the days already held before it (${fell.join(', ')}): its figures went down, and cannot be split by day.`,
    );
  }
  return [figure];
}

/**
 * get_media_buy_delivery for the line's buy, asked for the flight to date with each day broken
 * out. A daily breakdown (the package's, or the buy's: one buy per line) gives the days asked for;
 * clicks and completions of a day are 0 where the seller gives them in totals alone. A seller that
 * gives totals only is read as totals (see totalsAsDay). A seller that cannot be asked, or whose
 * answer leaves the buy out, throws: the figures wait, they are never invented.
 */
export function adcpReporter(connection: AdcpSellerConnection): DeliveryReporter {
  return {
    async delivery(line: LineAtSupplier, fromDate: string, toDate: string, ctx: AdapterContext): Promise<DeliveryReport> {
      if (!line.providerReference) throw new Error('The line has no media buy at the seller.');
      const row = (await ctx.db('bookings').where({ id: line.bookingId }).first('advertiser_id')) as { advertiser_id: string } | undefined;
      const account = row ? await sellerAccountOf(ctx.db, connection.adapterKey, row.advertiser_id) : null;
      if (!account) throw new Error(`The workspace has no approved account on ${connection.adapterKey}.`);
      const { mediaBuyId, packageId } = parseAdcpReference(line.providerReference);
      const result = await connection.call(
        (c) =>
          c.getMediaBuyDelivery({
            account: accountRef(account, line.executionMode),
            media_buy_ids: [mediaBuyId],
            start_date: line.startDate,
            end_date: toDate,
            include_package_daily_breakdown: true,
          } as never),
        { signal: ctx.cut },
      );
      if (result.status !== 'completed') throw new Error(`get_media_buy_delivery answered ${result.status}: ${result.error ?? ''}`);
      const raw = result.data as RawDelivery;
      const asOf = raw.reporting_period?.end ?? new Date().toISOString();
      const buy = raw.media_buy_deliveries?.find((d) => d.media_buy_id === mediaBuyId);
      if (!buy) throw new Error(`The seller's delivery report leaves out media buy ${mediaBuyId}.`);
      const pkg = buy.by_package?.find((p) => p.package_id === packageId) ?? (buy.by_package?.length === 1 ? buy.by_package[0] : undefined);
      const breakdown = pkg?.daily_breakdown ?? buy.daily_breakdown;
      if (!breakdown) {
        const totals = pkg ?? buy.totals;
        if (!totals) throw new Error(`The seller's delivery report for media buy ${mediaBuyId} has neither days nor totals.`);
        return { asOf, days: await totalsAsDay(line, fromDate, toDate, raw, totals, ctx) };
      }
      const days = breakdown
        .filter((d) => d.date >= fromDate && d.date <= toDate)
        .map((d) => ({
          date: d.date,
          impressions: whole(d.impressions),
          clicks: whole(d.clicks),
          completions: whole(d.completed_views),
          spendMinor: toMinor(d.spend),
          // The seller calls the report's period closed: its days are final (a claim; a later figure is a discrepancy).
          ...(pkg?.is_final === true ? { final: true } : {}),
        }))
        .sort((a, b) => a.date.localeCompare(b.date));
      return { asOf, days };
    },
  };
}
