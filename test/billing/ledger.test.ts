import fc from 'fast-check';
import { createTestEnv, type TestEnv } from '../support/api';
import { fundWallet, walletAndLedger } from '../support/wallet';
import { SYSTEM } from '../../shared/auth/actor';
import { changeLine } from '../../shared/bookings/lines/store';
import { reserve } from '../../shared/wallet/ledger';
import { settleProviderEvent } from '../../shared/billing/settlement';
import { createLogger } from '../../shared/logger';
import { Problem } from '../../shared/errors';
import { ensureWorkspace } from '../../shared/workspaces/workspace-store';
import { fundingRequest, liveBooking, SANDBOX_SECRET, session, signed } from './support';
import { day, report } from '../delivery/support';
import { closeOutBooking } from '../../shared/delivery/closeout';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const silent = createLogger('silent');

describe('the ledger is append-only', () => {
  test('an entry can be neither changed nor removed, not even by the service’s own database user', async () => {
    await fundWallet(env, 'org-append', 5_000);
    const entry = await env.db('wallet_entries').where({ advertiser_id: 'org-append' }).first();
    await expect(env.db('wallet_entries').where({ id: entry.id }).update({ amount_minor: 1 })).rejects.toThrow(/append-only/);
    await expect(env.db('wallet_entries').where({ id: entry.id }).del()).rejects.toThrow(/append-only/);
    await expect(env.db.raw('truncate wallet_entries')).rejects.toThrow(/append-only/);
    expect(await env.db('wallet_entries').where({ id: entry.id }).first()).toEqual(entry);
  });
});

type Op =
  | { kind: 'topup'; amount: number }
  | { kind: 'launch'; budgets: number[]; headroom: number }
  | { kind: 'confirm' | 'reject'; pick: number }
  | { kind: 'study'; amount: number }
  /** The supplier reports (or restates) one day of a confirmed line's delivery. */
  | { kind: 'deliver'; pick: number; day: number; spend: number }
  | { kind: 'closeout'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('topup' as const), amount: fc.integer({ min: 1, max: 200_000 }) }),
  fc.record({
    kind: fc.constant('launch' as const),
    budgets: fc.array(fc.integer({ min: 0, max: 60_000 }), { minLength: 1, maxLength: 3 }),
    headroom: fc.integer({ min: 0, max: 20_000 }),
  }),
  fc.record({ kind: fc.constantFrom('confirm' as const, 'reject' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('study' as const), amount: fc.integer({ min: 1, max: 80_000 }) }),
  fc.record({
    kind: fc.constant('deliver' as const),
    pick: fc.nat(),
    day: fc.integer({ min: 1, max: 3 }),
    spend: fc.integer({ min: 0, max: 40_000 }),
  }),
  fc.record({ kind: fc.constant('closeout' as const), pick: fc.nat() }),
);

describe('balance = sum of entries, and available ≥ 0, at every step', () => {
  test('over random interleavings of top-ups, launches, confirmations, rejections, study approvals, delivery, restatements and closeout', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const org = `org-prop-${run++}`;
        await ensureWorkspace(env.db, org);
        const open: Array<{ bookingId: string; lineId: string }> = [];
        // Confirmed lines: what the supplier reported for each day, and whether their booking is closed out.
        const running: Array<{ bookingId: string; lineId: string; budget: number; days: Map<number, number> }> = [];
        const closed = new Set<string>();
        const capturedOf = new Map<string, number>();
        let credited = 0;
        const captured = () => [...capturedOf.values()].reduce((a, b) => a + b, 0);
        for (const o of ops) {
          const refused = async (fn: () => Promise<unknown>) => {
            const before = await walletAndLedger(env, org);
            try {
              await fn();
            } catch (err) {
              // Only an honest refusal for want of funds, and it changed nothing.
              expect(err).toBeInstanceOf(Problem);
              expect((err as Problem).code).toBe('unfunded');
              expect(await walletAndLedger(env, org)).toEqual(before);
              return true;
            }
            return false;
          };
          if (o.kind === 'topup') {
            const request = await fundingRequest(env.db, org, o.amount);
            const paid = session({ id: request.sessionId, requestId: request.id, workspace: org, amount: o.amount });
            const { payload, header } = signed('checkout.session.completed', paid);
            expect((await settleProviderEvent(env.db, Buffer.from(payload), header, SANDBOX_SECRET, silent)).result).toBe('credited');
            credited += o.amount;
          } else if (o.kind === 'launch') {
            const commitment = o.budgets.reduce((s, b) => s + b, 0) + o.headroom;
            let made: Awaited<ReturnType<typeof liveBooking>> | undefined;
            const wasRefused = await refused(async () => (made = await liveBooking(env, org, o.budgets, commitment)));
            if (!wasRefused && made) for (const lineId of made.lineIds) open.push({ bookingId: made.bookingId, lineId });
          } else if (o.kind === 'study') {
            await refused(() =>
              env.db.transaction((trx) =>
                reserve(
                  trx,
                  {
                    advertiserId: org,
                    amountMinor: o.amount,
                    subjectType: 'study_approval',
                    subjectId: crypto.randomUUID(),
                    actorId: 'test',
                  },
                  'this study',
                ),
              ),
            );
          } else if (o.kind === 'deliver') {
            if (running.length) {
              const line = running[o.pick % running.length]!;
              line.days.set(o.day, o.spend);
              await report(env, { ...line, advertiserId: org }, [day(`2099-03-0${o.day}`, o.spend)]);
              const delivered = [...line.days.values()].reduce((a, b) => a + b, 0);
              // Captured spend follows delivery, capped at the budget, until the booking is closed out.
              if (!closed.has(line.bookingId)) capturedOf.set(line.lineId, Math.min(delivered, line.budget));
            }
          } else if (o.kind === 'closeout') {
            if (running.length) {
              const { bookingId } = running[o.pick % running.length]!;
              await closeOutBooking(env.db, bookingId, { tolerancePercent: 1 });
              closed.add(bookingId);
            }
          } else if (open.length) {
            const [line] = open.splice(o.pick % open.length, 1);
            await env.db.transaction(async (trx) => {
              await changeLine(trx, { ...line!, to: 'in-progress', actor: SYSTEM, action: 'test.start' });
              const moved = await changeLine(trx, {
                ...line!,
                to: o.kind === 'confirm' ? 'confirmed' : 'rejected',
                actor: SYSTEM,
                action: 'test.end',
              });
              if (o.kind === 'confirm') running.push({ ...line!, budget: Number(moved.budget_minor), days: new Map() });
            });
          }
          const { wallet, consistent } = await walletAndLedger(env, org);
          expect(consistent).toBe(true);
          expect(wallet.availableMinor).toBeGreaterThanOrEqual(0);
          expect(wallet.reservedMinor).toBeGreaterThanOrEqual(0);
          expect(wallet.balanceMinor).toBe(credited - captured());
        }
      }),
      { numRuns: 25, seed: Number(process.env.LEDGER_SEED ?? 20261122) },
    );
  });
});
