import type { Knex } from 'knex';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { approve, draftCampaign, post, type PlanLineInput } from '../support/bookings';
import { approvedCreative, makeCreative } from '../support/creatives';
import { createDb } from '../../shared/db/knex';
import { checkCreativeEvidence } from '../../shared/creatives/creative-approvals';
import type { CreativeRef } from '../../shared/creatives/creative-schemas';

let env: TestEnv;
let api: TestApi;
/** A second API on a connection pool of its own, whose statements this file counts. */
let counted: TestApi;
let countedDb: Knex;
let statements: string[] = [];
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api({ RATE_LIMIT_MAX: '100000' });
  countedDb = createDb(env.database.url);
  countedDb.on('query', (q: { sql: string }) => statements.push(q.sql));
  counted = await env.api({ RATE_LIMIT_MAX: '100000' }, { db: countedDb });
});
afterAll(async () => {
  await env.close();
  await countedDb.destroy();
});

/** A creative at its current version, as a plan line carries it. */
async function refOf(id: string): Promise<CreativeRef> {
  const c = await env
    .db('creatives as c')
    .join('creative_versions as v', (j) => j.on('v.creative_id', 'c.id').andOn('v.version', 'c.current_version'))
    .where('c.id', id)
    .first('c.id', 'c.name', 'c.format', 'v.asset_name', 'v.asset_fingerprint', 'v.version', 'v.metadata_digest');
  return {
    id: c.id,
    name: c.name,
    format: c.format,
    assetUrl: `/files/assets/${c.asset_name}`,
    assetFingerprint: c.asset_fingerprint,
    version: c.version,
    metadataDigest: c.metadata_digest,
  };
}

const creativeReads = () => statements.filter((s) => /creative_versions/.test(s)).length;
const planVersion = async (campaignId: string) =>
  Number((await env.db('plans').where({ campaign_id: campaignId }).first('version')).version);
const putPlan = (a: TestApi, token: string, campaignId: string, lines: PlanLineInput[]) =>
  post(a, token, `/api/v1/campaigns/${campaignId}/plan`, { expectedVersion: 1, lines }, 'PUT');

describe("a plan's creatives", () => {
  test('every line keeps its own creatives in order, and all lines are read together: once to plan, once to launch', async () => {
    const token = await env.issuer.token({ org: 'org-pc', user: 'buyer' });
    const [ctv1, ctv2, audio, dooh] = [
      await makeCreative(api, token, 'ctv'),
      await makeCreative(api, token, 'ctv'),
      await makeCreative(api, token, 'audio'),
      await makeCreative(api, token, 'dooh'),
    ];
    const lines: PlanLineInput[] = [
      // A uuid in upper case names the same creative.
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000, creativeIds: [ctv2!.id.toUpperCase(), ctv1!.id] },
      { channel: 'audio', adapterKey: 'sandbox-audio', budgetMinor: 1_000, creativeIds: [audio!.id] },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 1_000, creativeIds: [dooh!.id] },
      { channel: 'search', adapterKey: 'sandbox-search', budgetMinor: 1_000 },
    ];
    const { campaignId } = await draftCampaign(
      api,
      token,
      lines.map((l) => ({ ...l, creativeIds: [] })),
    );

    statements = [];
    expect((await putPlan(counted, token, campaignId, lines)).status).toBe(200);
    expect(creativeReads()).toBe(1);

    await approve(api, token, campaignId, 2);
    statements = [];
    const launched = await post(counted, token, `/api/v1/campaigns/${campaignId}/launch`);
    expect(launched.status).toBe(202);
    expect(creativeReads()).toBe(1);

    const { booking } = await json<{ booking: { lines: Array<{ creatives: Array<{ id: string; version: number }> }> } }>(launched);
    expect(booking.lines.map((l) => l.creatives.map((c) => c.id.toLowerCase()))).toEqual([
      [ctv2!.id, ctv1!.id],
      [audio!.id],
      [dooh!.id],
      [],
    ]);
    expect(booking.lines[1]!.creatives[0]).toMatchObject({ version: 1, assetFingerprint: audio!.assetFingerprint });
  });

  test('the first bad creative in line order is the one refused, and the plan is left as it was', async () => {
    const token = await env.issuer.token({ org: 'org-pc-2', user: 'buyer' });
    const other = await env.issuer.token({ org: 'org-pc-other', user: 'buyer' });
    const ctv = await makeCreative(api, token, 'ctv');
    const dooh = await makeCreative(api, token, 'dooh');
    const theirs = await makeCreative(api, other, 'ctv');
    const { campaignId } = await draftCampaign(api, token, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 1_000 },
    ]);
    const before = await env.db('plans').where({ campaign_id: campaignId }).first('lines', 'version');

    // Line 0 names a creative of another channel, line 1 another tenant's: line 0's is reported.
    const mismatch = await putPlan(api, token, campaignId, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000, creativeIds: [ctv.id, dooh.id] },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 1_000, creativeIds: [theirs.id] },
    ]);
    expect(mismatch.status).toBe(400);
    expect(await json(mismatch)).toMatchObject({ code: 'creative_channel_mismatch', detail: expect.stringContaining(dooh.id) });

    // The other way round, the other tenant's creative comes first and is not found.
    const unknown = await putPlan(api, token, campaignId, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000, creativeIds: [theirs.id] },
      { channel: 'dooh', adapterKey: 'sandbox-dooh', budgetMinor: 1_000, creativeIds: [ctv.id] },
    ]);
    expect(unknown.status).toBe(404);

    // Not a uuid at all: not found either.
    const malformed = await putPlan(api, token, campaignId, [
      { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000, creativeIds: ['cr-1'] },
    ]);
    expect(malformed.status).toBe(404);

    expect(await env.db('plans').where({ campaign_id: campaignId }).first('lines', 'version')).toEqual(before);
    expect(await planVersion(campaignId)).toBe(1);
  });

  test("a creative outside the caller's products is not found, where a full-scope caller is told its channel differs", async () => {
    const full = await env.issuer.token({ org: 'org-pc-3', user: 'buyer' });
    const ctvOnly = await env.issuer.token({ org: 'org-pc-3', user: 'ctv-buyer', channels: ['ctv'] });
    const dooh = await makeCreative(api, full, 'dooh');
    const { campaignId } = await draftCampaign(api, ctvOnly, [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000 }]);
    const lines = [{ channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 1_000, creativeIds: [dooh.id] }];
    expect((await putPlan(api, ctvOnly, campaignId, lines)).status).toBe(404);
    const res = await putPlan(api, full, campaignId, lines);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'creative_channel_mismatch' });
    expect(await planVersion(campaignId)).toBe(1);
  });

  test("live evidence: each line's creatives need their own supplier's approval of those exact bytes and metadata", async () => {
    const token = await env.issuer.token({ org: 'org-pc-4', user: 'buyer' });
    const approved = await refOf(await approvedCreative(api, env.db, token, 'live-ctv'));
    const unreviewed = await refOf((await makeCreative(api, token, 'ctv', { name: 'Unreviewed teaser' })).id);
    const check = (lines: Array<{ adapterKey: string; creatives: CreativeRef[] }>) => checkCreativeEvidence(env.db, lines);

    await expect(check([{ adapterKey: 'live-ctv', creatives: [{ ...approved, id: approved.id.toUpperCase() }] }])).resolves.toBeUndefined();
    // Staff book workflow suppliers by hand: no review needed.
    await expect(check([{ adapterKey: 'manual', creatives: [unreviewed] }])).resolves.toBeUndefined();

    const refused = async (lines: Array<{ adapterKey: string; creatives: CreativeRef[] }>) => {
      const err = (await check(lines).then(
        () => null,
        (e: unknown) => e,
      )) as { code?: string; detail?: string } | null;
      expect(err).not.toBeNull();
      return err!;
    };
    // Approved by another supplier, or for other metadata: no evidence.
    expect(await refused([{ adapterKey: 'live-tv', creatives: [approved] }])).toMatchObject({ code: 'creative_not_approved' });
    expect(await refused([{ adapterKey: 'live-ctv', creatives: [{ ...approved, metadataDigest: 'f'.repeat(64) }] }])).toMatchObject({
      code: 'creative_not_approved',
    });
    // The first line is fine; the second's unreviewed creative is the one named.
    const second = await refused([
      { adapterKey: 'live-ctv', creatives: [approved] },
      { adapterKey: 'live-ctv', creatives: [approved, unreviewed] },
    ]);
    expect(second).toMatchObject({ code: 'creative_not_approved', detail: expect.stringContaining('Unreviewed teaser') });
    expect(await refused([{ adapterKey: 'live-ctv', creatives: [] }])).toMatchObject({ code: 'creative_evidence_required' });
  });
});
