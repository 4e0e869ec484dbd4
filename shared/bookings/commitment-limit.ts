import type { Knex } from 'knex';
import { toMinor } from '../db/knex';
import { Problem } from '../errors';
import { lineSpentMinor } from './booking-money';
import type { LineRow } from './booking-store';

/**
 * What a booking's lines may commit, and the one check that keeps every change within it: an
 * amendment today, a daily cap or an automatic rule tomorrow. No change may take the lines past
 * the campaign's maximum commitment (`maximumCommitmentMinor`, kept on the booking at launch).
 *
 * A line commits its budget, or the budget a change in hand asks for when that is higher; a line
 * the supplier refused commits nothing; a line ended for good commits what it has spent.
 */
type CommittingLine = Pick<LineRow, 'id' | 'status' | 'stop' | 'budget_minor' | 'execution_mode' | 'operation' | 'operation_id'>;

export async function lineCommitmentMinor(trx: Knex, line: CommittingLine): Promise<number> {
  if (line.status === 'rejected') return 0;
  if (line.status === 'stopped' && line.stop?.kind === 'end') return lineSpentMinor(trx, line);
  const budget = toMinor(line.budget_minor);
  if (line.operation !== 'change-budget' || !line.operation_id) return budget;
  const pending = await trx('line_operations').where({ id: line.operation_id }).first('budget_to_minor');
  return Math.max(budget, pending?.budget_to_minor == null ? 0 : toMinor(pending.budget_to_minor));
}

/** The 409 that names the limit; nothing has changed when it is thrown. */
export const commitmentLimitExceeded = (committedMinor: number, limitMinor: number, what: string) =>
  new Problem(
    409,
    'commitment_limit_exceeded',
    'Over the maximum commitment',
    `${what} would commit ${committedMinor} across the booking's lines, over the campaign's maximum commitment (maximumCommitmentMinor) of ${limitMinor}. Lower the budgets so that the lines add up to ${limitMinor} at most.`,
    'correctable',
    [{ path: 'lines', message: `the lines may commit maximumCommitmentMinor ${limitMinor} at most`, code: 'maximumCommitmentMinor' }],
  );

/**
 * Refuses `proposed` (new budgets by line id) when, with every other line as it stands, the
 * booking's lines would commit more than `limitMinor`. Call it under the lines' locks.
 */
export async function assertWithinCommitment(
  trx: Knex,
  lines: CommittingLine[],
  proposed: ReadonlyMap<string, number>,
  limitMinor: number,
  what = 'This change',
): Promise<void> {
  let committed = 0;
  for (const line of lines) {
    const asked = proposed.get(line.id);
    committed += asked ?? (await lineCommitmentMinor(trx, line));
  }
  if (committed > limitMinor) throw commitmentLimitExceeded(committed, limitMinor, what);
}
