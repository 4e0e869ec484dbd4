import { createTestEnv, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, sevenSandboxLines } from '../support/bookings';
import { until } from '../support/wait';
import { mapLimit, startApiProcess } from './support/fleet';
import { figure } from './support/input-report';

/**
 * The API process is SIGKILLed at a moment when a launch has committed its booking and
 * outbox rows but not yet handed them to the queues. Once things restart, every committed
 * line must run exactly once and every client retry must get a clear answer.
 */
const CAMPAIGNS = 40;

let env: TestEnv;
let setup: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  setup = await env.api();
});
afterAll(() => env.close());

// Statements running in this test's database other than the asking one.
const othersActive = async () =>
  Number(
    (
      await env.db.raw(
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
      )
    ).rows[0].n,
  );
const unrelayed = async () => Number((await env.db('outbox').whereNull('relayed_at').count({ n: '*' }))[0]!.n);

test('an API process killed between commit and enqueue loses no job and sends nothing twice', async () => {
  const token = await env.issuer.token({ org: 'org-crash-relay', user: 'buyer' });
  const campaigns = await mapLimit(Array.from({ length: CAMPAIGNS }), 4, async () => {
    const { campaignId, planVersion } = await draftCampaign(setup, token, sevenSandboxLines());
    await approve(setup, token, campaignId, planVersion);
    return campaignId;
  });
  const apiEnv = env.processEnv({ RATE_LIMIT_MAX: '100000' });
  const launch = async (url: string, campaignId: string) =>
    fetch(`${url}/api/v1/campaigns/${campaignId}/launch`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
      .then((r) => r.status)
      .catch(() => 'connection lost' as const);

  const first = await startApiProcess(apiEnv);
  const bookings = async () => Number((await env.db('bookings').whereIn('campaign_id', campaigns).count({ n: '*' }))[0]!.n);
  // Once a quarter of the launches are in, freeze the process the moment committed rows wait
  // for its relay; if they are still waiting once it is frozen, that is the window: kill it there.
  let killedWith = 0;
  const watcher = (async () => {
    while (killedWith === 0 && (await bookings()) < CAMPAIGNS / 4) await new Promise((r) => setTimeout(r, 20));
    while (killedWith === 0 && first.process.child.exitCode === null) {
      if ((await unrelayed()) > 0) {
        first.process.child.kill('SIGSTOP');
        // A statement the process sent before it froze still runs (and commits) in PostgreSQL:
        // let those finish, so what waits now is what the kill leaves.
        await until('the frozen process’s statements to finish', async () => (await othersActive()) === 0, 10_000);
        const waiting = await unrelayed();
        if (waiting > 0) {
          first.process.child.kill('SIGKILL');
          await first.process.stop();
          killedWith = waiting;
        } else first.process.child.kill('SIGCONT');
      }
    }
  })();
  const answers = await mapLimit(campaigns, 8, (id) => launch(first.url, id));
  killedWith ||= -1;
  await watcher;
  await first.process.stop('SIGKILL');
  const leftByKill = await unrelayed();
  const committed = await bookings();

  // Restart: a new API process, the workers (whose scheduler relays what the dead one left),
  // and clients retrying every launch that lost its connection.
  const second = await startApiProcess(apiEnv);
  const workers = await env.workers({ OUTBOX_RELAY_INTERVAL_MS: '200' });
  try {
    const retried = await Promise.all(
      campaigns.map(async (id, i) => (answers[i] === 'connection lost' ? launch(second.url, id) : answers[i])),
    );
    const lines = () =>
      env
        .db('booking_lines as l')
        .join('bookings as b', 'b.id', 'l.booking_id')
        .whereIn('b.campaign_id', campaigns)
        .select('l.id', 'l.status');
    await until('every committed line to run', async () => (await lines()).every((l) => l.status === 'confirmed'), 120_000);

    const bookingsPerCampaign = await env
      .db('bookings')
      .whereIn('campaign_id', campaigns)
      .groupBy('campaign_id')
      .select('campaign_id', env.db.raw('count(*)::int as n'));
    const sent = await env
      .db('sandbox_ledger')
      .whereIn(
        'line_id',
        (await lines()).map((l) => l.id),
      )
      .groupBy('line_id')
      .select('line_id', env.db.raw('count(*)::int as n'));
    const allLines = await lines();
    figure(
      `crash between commit and enqueue: API killed with ${killedWith} outbox rows committed and not yet relayed ` +
        `(${leftByKill} still waiting after the kill); ${committed} of ${CAMPAIGNS} launches committed before the kill; ` +
        `after restart ${allLines.length} lines ran, ${sent.filter((s) => s.n > 1).length} sent twice, ` +
        `${allLines.length - sent.length} never sent`,
    );
    expect(killedWith).toBeGreaterThan(0);
    expect(leftByKill).toBeGreaterThan(0);
    // A retried launch either commits now (202) or finds the booking its lost request made (200).
    expect(retried.filter((s) => s !== 202 && s !== 200)).toEqual([]);
    expect(bookingsPerCampaign).toHaveLength(CAMPAIGNS);
    expect(bookingsPerCampaign.every((b) => b.n === 1)).toBe(true);
    expect(allLines).toHaveLength(CAMPAIGNS * 7);
    expect(sent).toHaveLength(allLines.length);
    expect(sent.every((s) => s.n === 1)).toBe(true);
    expect(await unrelayed()).toBe(0);
  } finally {
    await workers.close();
    await second.process.stop();
  }
}, 300_000);
