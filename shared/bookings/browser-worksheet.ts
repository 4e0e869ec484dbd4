import { digestOf } from '../digest';
import type { BrowserJobLine } from './line-terms';
import type { WorksheetRow } from './browser-job-schemas';

/** A field of the supplier's page, as the browser read it (nothing is typed into it). */
export interface PageField {
  /** Its label, aria-label, placeholder, or failing those its name or id. */
  label: string;
  type: string;
}

interface Detail {
  detail: string;
  value: string;
  /** The words a field for this detail is labelled with. */
  matches: RegExp;
}

interface SnapshotPart {
  campaign?: { name?: string; clientName?: string; startDate?: string; endDate?: string; budgetMinor?: number; currency?: string };
  plan?: { lines?: Array<{ channel?: string; budgetMinor?: number }> };
}

const amount = (minor: number) => `${(minor / 100).toFixed(2)} GBP`;

/**
 * What the person doing a booking enters, and where: the line's details as approved (and as
 * amended since, said so), each beside the field of the supplier's page it belongs in when one is
 * labelled for it. The page is only read; the person enters the values themselves.
 */
export function preparationWorksheet(line: BrowserJobLine, fields: readonly PageField[]): { sha256: string; rows: WorksheetRow[] } {
  const snapshot = (line.approvedSnapshot ?? {}) as SnapshotPart;
  const approvedBudget = snapshot.plan?.lines?.[line.position]?.budgetMinor;
  const approvedEnd = snapshot.campaign?.endDate;
  const details: Detail[] = [
    { detail: 'Campaign name', value: snapshot.campaign?.name ?? line.campaignName, matches: /campaign|order name|title|\bname\b/ },
    { detail: 'Advertiser', value: snapshot.campaign?.clientName ?? line.clientName, matches: /advertiser|client|brand|company/ },
    { detail: 'Start date', value: line.startDate, matches: /start|from|begin/ },
    {
      detail: 'End date',
      value: approvedEnd && approvedEnd !== line.endDate ? `${line.endDate} (approved ${approvedEnd}, amended since)` : line.endDate,
      matches: /\bend|until|finish|\bto\b/,
    },
    {
      detail: 'Budget',
      value:
        approvedBudget !== undefined && approvedBudget !== line.budgetMinor
          ? `${amount(line.budgetMinor)} (approved ${amount(approvedBudget)}, amended since)`
          : amount(line.budgetMinor),
      matches: /budget|amount|spend|total|price|cost/,
    },
    { detail: 'Currency', value: 'GBP', matches: /currency/ },
    { detail: 'Channel', value: line.channel, matches: /channel|media type|inventory/ },
    { detail: 'Our reference', value: line.channelCampaignId, matches: /reference|\bref\b|\bpo\b|purchase order|order number/ },
    ...(line.providerAttemptId ? [{ detail: 'Booking attempt', value: line.providerAttemptId, matches: /attempt|idempotency/ }] : []),
    ...line.creatives.map((c, i) => ({
      detail: `Creative ${i + 1}`,
      value: `${c.name} (${c.format}): ${c.assetUrl} ${c.assetFingerprint}`,
      matches: /creative|artwork|asset|upload|file/,
    })),
  ];
  const used = new Set<number>();
  const rows = details.map(({ detail, value, matches }) => {
    const index = fields.findIndex((f, i) => !used.has(i) && matches.test(f.label.toLowerCase()));
    if (index >= 0) used.add(index);
    return { detail, value, field: index >= 0 ? fields[index]!.label : null };
  });
  return { sha256: digestOf(rows), rows };
}
