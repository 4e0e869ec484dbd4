import type { Problem, ProblemIssue } from '../../shared/errors';

/** What each form field is called on the page: the label a person sees, and the name a refusal uses. */
export const FIELD_LABELS: Record<string, string> = {
  evidence: 'Evidence',
  providerReference: 'Provider reference',
  outcome: 'Outcome',
  expectedVersion: 'Version shown',
  supplierUrl: 'Supplier URL',
  channelCampaignId: 'Line',
  purpose: 'Purpose',
  readOnlyConfirmed: 'Read-only confirmation',
  expectedSnapshotDigest: 'Snapshot digest shown',
  note: 'Why abandon',
  expectedActionDigest: 'Digest shown',
  sessionId: 'Checkout session id',
  evidenceReference: 'Evidence reference',
  expectedRevision: 'Revision shown',
};

export const labelOf = (field: string) => FIELD_LABELS[field] ?? field;

/** The form field an issue is about (`body.providerReference` → `providerReference`). */
export const fieldOf = (issue: ProblemIssue) => issue.path.replace(/^(body|query|params)\.?/, '').split('.')[0] ?? '';

/** Field names in a message said as their labels: "providerReference is required" → "provider reference is required". */
const withLabels = (text: string) =>
  Object.entries(FIELD_LABELS).reduce((m, [k, l]) => m.replace(new RegExp(`\\b${k}\\b`, 'g'), l.toLowerCase()), text);

const sentence = (s: string) => (s ? `${s[0]!.toUpperCase()}${s.slice(1)}${/[.!?]$/.test(s) ? '' : '.'}` : s);

/** One schema issue as a sentence naming the field as its label does. */
export function issueInWords(issue: ProblemIssue): string {
  const field = fieldOf(issue);
  const label = labelOf(field);
  const min = /expected \w+ to have >=?(\d+)/.exec(issue.message)?.[1];
  const max = /expected \w+ to have <=?(\d+)/.exec(issue.message)?.[1];
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${label} is required.`;
  if (issue.code === 'too_small' && min === '1') return `${label} is required (spaces alone do not count).`;
  if (issue.code === 'too_small' && min) return `${label} needs at least ${min} characters.`;
  if (issue.code === 'too_big' && max) return `${label} can have at most ${max} characters.`;
  // A rule's own words, with the field names it uses said as their labels.
  if (issue.code === 'custom') return sentence(withLabels(issue.message));
  return `${label}: ${sentence(issue.message)}`;
}

/**
 * A refusal, said once, in words: what it was about (a line, as its section is headed), which
 * field, and that nothing changed.
 */
export function refusalInWords(err: Problem, subject?: string): string {
  const about = subject ? `${subject}: ` : '';
  if (err.code === 'version_conflict' || err.code === 'revision_conflict')
    return `${subject ?? 'This'} changed since you loaded it. Nothing was changed: look at it again and decide.`;
  if (err.code === 'csrf_failed') return err.detail;
  if (err.errors?.length) return `${about}${err.errors.map(issueInWords).join(' ')} Nothing was changed.`;
  return `${about}${sentence(withLabels(err.detail))} Nothing was changed.`;
}
