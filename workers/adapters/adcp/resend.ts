import type { AgentClient, TaskResult } from '@adcp/sdk';
import type { AdapterContext } from '../../../shared/adapters/adapter';
import { UnknownOutcome } from '../../../shared/adapters/adapter';
import { SellerUnreachable, type AdcpCapabilities, type AdcpSellerConnection } from '../../../shared/adapters/adcp/connection';
import { resendAllowed, type AnswerVerdict } from '../../../shared/adapters/adcp/outcomes';
import { RESEND_DELAYS_MS, waitToResend } from '../../../shared/adapters/adcp/resend-waits';

// The waits are shared with the read-back a change's answer is checked by (shared/adapters/adcp/read-back.ts).
export { RESEND_DELAYS_MS, waitToResend };

/**
 * Sends one change to the seller under its idempotency key (the attempt id), the same body again
 * only as the resend rule says (docs/adcp.md, "Resending"): when nothing reached the seller, when
 * it said it did nothing for now, or when its answer was lost inside its declared replay window.
 * Returns the outcome `verdictOf` reads from the answer, told whether an earlier send's answer
 * was lost (`afterLoss`: that send may have done the change, whatever this answer says). Throws
 * SellerUnreachable when no send ever reached the seller (nothing was done), and UnknownOutcome
 * when one may have and the rule allows no more.
 */
export async function sendChange<O>(
  connection: AdcpSellerConnection,
  ctx: AdapterContext,
  send: (client: AgentClient) => Promise<TaskResult<unknown>>,
  verdictOf: (result: TaskResult<unknown>, sent: { afterLoss: boolean }) => AnswerVerdict<O>,
): Promise<O> {
  const caps = await connection.capabilities().catch((): AdcpCapabilities | null => null);
  let firstSentAt: number | null = null;
  let afterLoss = false;
  for (let attempt = 0; ; attempt++) {
    const delay = RESEND_DELAYS_MS[attempt];
    let why: string;
    const sentAt = Date.now();
    try {
      if (ctx.signal?.aborted) throw new UnknownOutcome(`The call's time ran out before it could be sent again (sent ${attempt} times).`);
      const verdict = verdictOf(await connection.call(send, { signal: ctx.cut }), { afterLoss });
      firstSentAt ??= sentAt;
      if (verdict.kind === 'outcome') return verdict.outcome;
      // The seller said it did nothing (busy, unavailable): once resending is over, that is its answer.
      if (verdict.kind === 'resend' && verdict.refusal && delay === undefined) return verdict.refusal;
      // An answer that says nothing of what the seller did (a transport failure inside its reply) is a lost one.
      if (verdict.kind === 'unknown') afterLoss = true;
      why = verdict.why;
    } catch (err) {
      if (err instanceof UnknownOutcome) throw err;
      if (err instanceof SellerUnreachable) {
        // Nothing reached the seller this time: sending again is safe whatever its replay window.
        if (delay !== undefined && (await waitToResend(delay, ctx.signal))) continue;
        const tried = `${err.message} (tried ${attempt + 1} times)`;
        throw firstSentAt === null ? new SellerUnreachable(tried, { cause: err }) : new UnknownOutcome(tried);
      }
      firstSentAt ??= sentAt;
      afterLoss = true;
      why = `The seller's answer was lost: ${(err as Error).message}`;
    }
    if (delay === undefined || !resendAllowed(caps, firstSentAt ?? sentAt) || !(await waitToResend(delay, ctx.signal))) {
      throw new UnknownOutcome(why);
    }
  }
}
