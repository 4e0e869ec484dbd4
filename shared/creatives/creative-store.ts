import { requireEntitled } from '../auth/scope';
import { isUuid } from '../ids';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { rowsPrepared } from '../db/knex';
import { badRequest, notFound, unprocessable } from '../errors';
import type { Principal } from '../auth/principal';
import { ASSET_NAME } from '../assets/asset-store';
import { findCampaign } from '../campaigns/campaign-store';
import { digestOf } from '../digest';
import type { CreateCreative, CreativeDestination, CreativeRef, DeliveryMetadata, ReviseCreative } from './creative-schemas';
import type { CreativeCopy } from '../adapters/adapter';

/** Which stored media suits which channel. */
const SUITABLE: Record<string, RegExp> = {
  audio: /^audio\//,
  ctv: /^video\//,
  tv: /^video\//,
  cinema: /^video\//,
  dooh: /^(image|video)\//,
  social: /^(image|video)\//,
  search: /^image\//,
};

/** A stored version's words, as a supplier's review receives them. */
export function creativeCopyOf(v: { copy_text: string; audio_delivery: unknown; delivery: unknown }): CreativeCopy {
  const delivery = (v.delivery ?? {}) as DeliveryMetadata;
  const audio = v.audio_delivery as { tagline: string; callToAction: string; destinationUrl: string } | null;
  // A destination set on the creative wins over the one an audio spot was created with.
  const destinationUrl = delivery.destinationUrl ?? audio?.destinationUrl;
  return {
    copyText: v.copy_text,
    ...delivery,
    ...(destinationUrl ? { destinationUrl } : {}),
    ...(audio ? { audio: { tagline: audio.tagline, callToAction: audio.callToAction, destinationUrl: audio.destinationUrl } } : {}),
  };
}

/** The delivery metadata a review approves: copy, audio delivery and the revisable fields. */
export const metadataDigestOf = (v: { copyText: string; audioDelivery: unknown; delivery: DeliveryMetadata }) =>
  digestOf({ copyText: v.copyText, audioDelivery: v.audioDelivery ?? null, delivery: v.delivery });

/** `/files/assets/<name>`, relative or absolute: the creative must point at bytes we hold. */
async function resolveAsset(db: Knex, p: Principal, assetUrl: string) {
  let path: string;
  try {
    path = new URL(assetUrl, 'http://local.invalid').pathname;
  } catch {
    throw badRequest('assetUrl is not a URL.', [{ path: 'body.assetUrl', message: 'not a URL' }]);
  }
  const match = /^\/files\/assets\/([^/]+)$/.exec(path);
  if (!match)
    throw unprocessable(
      'assetUrl must be an uploaded asset (/files/assets/<name>); upload the bytes first.',
      'asset_not_stored',
      'correctable',
    );
  let name: string;
  try {
    name = decodeURIComponent(match[1]!);
  } catch {
    throw notFound();
  }
  // The same bytes may have been uploaded by several workspaces: each of them owns its upload.
  const row = ASSET_NAME.test(name)
    ? await db('assets as a')
        .join('asset_owners as o', 'o.asset_name', 'a.name')
        .where({ 'a.name': name, 'o.advertiser_id': p.advertiserId })
        .first('a.*')
    : undefined;
  if (!row) throw notFound();
  return { name, url: `/files/assets/${name}`, fingerprint: `sha256:${row.sha256}`, contentType: row.content_type as string };
}

async function loadCreative(db: Knex, p: Principal, id: string, forUpdate = false) {
  if (!isUuid(id)) throw notFound();
  const q = db('creatives').where({ id, advertiser_id: p.advertiserId }).first();
  if (forUpdate) q.forUpdate();
  const row = await q;
  // Out-of-product creatives are as invisible as another tenant's.
  if (!row || !(p.channels as string[]).includes(row.channel)) throw notFound();
  return row;
}

function versionView(v: Record<string, unknown>) {
  return {
    version: v.version as number,
    assetUrl: `/files/assets/${v.asset_name as string}`,
    assetFingerprint: v.asset_fingerprint as string,
    contentType: v.content_type as string,
    copyText: v.copy_text as string,
    audioDelivery: (v.audio_delivery as unknown) ?? null,
    delivery: v.delivery as DeliveryMetadata,
    metadataDigest: v.metadata_digest as string,
    createdAt: (v.created_at as Date).toISOString(),
  };
}

/** The creative at its current version, with its review state and the approvals valid for that version. */
export async function creativeView(db: Knex, p: Principal, id: string, opts: { history?: boolean } = {}) {
  const c = await loadCreative(db, p, id);
  // Sequential on purpose: callers may pass a transaction, which is one connection.
  const versions = await db('creative_versions').where({ creative_id: id }).orderBy('version');
  const reviews = await db('creative_reviews').where({ creative_id: id }).orderBy('created_at');
  const approvals = await db('creative_approvals').where({ creative_id: id }).orderBy('created_at');
  const current = versions.find((v) => v.version === c.current_version)!;
  const currentReviews = reviews.filter((r) => r.version === c.current_version);
  const latest = currentReviews.at(-1);
  const reviewView = (r: Record<string, unknown>) => ({
    id: r.id,
    version: r.version,
    adapterKey: r.adapter_key,
    status: r.status,
    providerReference: r.provider_reference ?? null,
    reasons: r.reasons ?? null,
    createdAt: (r.created_at as Date).toISOString(),
    finishedAt: r.finished_at ? (r.finished_at as Date).toISOString() : null,
  });
  const approvalView = (a: Record<string, unknown>) => ({
    id: a.id,
    version: a.version,
    adapterKey: a.adapter_key,
    assetFingerprint: a.asset_fingerprint,
    metadataDigest: a.metadata_digest,
    providerReference: a.provider_reference ?? null,
    status: a.status,
    createdAt: (a.created_at as Date).toISOString(),
  });
  return {
    creative: {
      id: c.id,
      name: c.name,
      channel: c.channel,
      format: c.format,
      campaignId: c.campaign_id,
      status: 'active',
      ...versionView(current),
      reviewState: latest ? latest.status : 'not-submitted',
      approvals: approvals.filter((a) => a.status === 'valid' && a.version === c.current_version).map(approvalView),
      createdAt: (c.created_at as Date).toISOString(),
      updatedAt: (c.updated_at as Date).toISOString(),
      ...(opts.history
        ? { versions: versions.map(versionView), reviews: reviews.map(reviewView), approvalHistory: approvals.map(approvalView) }
        : {}),
    },
  };
}

export async function createCreative(db: Knex, p: Principal, body: CreateCreative, createdBy: string) {
  requireEntitled(p, [body.channel]);
  if (body.campaignId !== undefined) {
    const campaign = isUuid(body.campaignId) ? await findCampaign(db, p, body.campaignId) : null;
    if (!campaign) throw notFound();
    if (!campaign.channels.includes(body.channel)) {
      throw badRequest(
        `The campaign does not run on ${body.channel}.`,
        [{ path: 'body.channel', message: 'not a channel of the campaign' }],
        'channel_not_in_campaign',
      );
    }
  }
  const asset = await resolveAsset(db, p, body.assetUrl);
  if (!SUITABLE[body.channel]!.test(asset.contentType)) {
    throw unprocessable(`A ${asset.contentType} asset cannot run on ${body.channel}.`, 'asset_unsuitable', 'correctable');
  }
  const id = randomUUID();
  const delivery: DeliveryMetadata = {};
  await db.transaction(async (trx) => {
    await trx('creatives').insert({
      id,
      advertiser_id: p.advertiserId,
      campaign_id: body.campaignId ?? null,
      name: body.name,
      channel: body.channel,
      format: body.format,
      created_by: createdBy,
    });
    await trx('creative_versions').insert({
      creative_id: id,
      version: 1,
      asset_name: asset.name,
      asset_fingerprint: asset.fingerprint,
      content_type: asset.contentType,
      copy_text: body.copyText,
      audio_delivery: body.audioDelivery ? JSON.stringify(body.audioDelivery) : null,
      delivery: JSON.stringify(delivery),
      metadata_digest: metadataDigestOf({ copyText: body.copyText, audioDelivery: body.audioDelivery, delivery }),
      created_by: createdBy,
    });
  });
  return creativeView(db, p, id);
}

/**
 * A revision is a new version with its own delivery metadata (its words, or its destination);
 * approvals of earlier versions stop counting.
 */
export async function reviseCreative(db: Knex, p: Principal, id: string, body: ReviseCreative | CreativeDestination, createdBy: string) {
  await db.transaction(async (trx) => {
    const c = await loadCreative(trx, p, id, true);
    const prev = await trx('creative_versions').where({ creative_id: id, version: c.current_version }).first();
    const delivery: DeliveryMetadata = { ...(prev.delivery as DeliveryMetadata), ...body };
    const version = c.current_version + 1;
    await trx('creative_versions').insert({
      creative_id: id,
      version,
      asset_name: prev.asset_name,
      asset_fingerprint: prev.asset_fingerprint,
      content_type: prev.content_type,
      copy_text: prev.copy_text,
      audio_delivery: prev.audio_delivery ? JSON.stringify(prev.audio_delivery) : null,
      delivery: JSON.stringify(delivery),
      metadata_digest: metadataDigestOf({ copyText: prev.copy_text, audioDelivery: prev.audio_delivery, delivery }),
      created_by: createdBy,
    });
    await trx('creatives').where({ id }).update({ current_version: version, updated_at: trx.fn.now() });
    await trx('creative_approvals')
      .where({ creative_id: id, status: 'valid' })
      .where('version', '<', version)
      .update({ status: 'superseded' });
  });
  return creativeView(db, p, id);
}

export async function loadCreativeForUpdate(trx: Knex, p: Principal, id: string) {
  return loadCreative(trx, p, id, true);
}

/** One creative at its current version, as plan lines reference it. */
export type CurrentCreativeRow = Record<string, unknown>;

/** The current versions of the workspace's creatives (the caller narrows it to the ids wanted). */
const currentCreatives = (db: Knex, advertiser: string | Knex.Raw) =>
  db('creatives as c')
    .join('creative_versions as v', (j) => j.on('v.creative_id', 'c.id').andOn('v.version', 'c.current_version'))
    .where('c.advertiser_id', advertiser)
    .select('c.id', 'c.name', 'c.format', 'c.channel', 'v.asset_name', 'v.asset_fingerprint', 'v.version', 'v.metadata_digest');

/**
 * The same read inside a plan's read, for the plan row's own lines (`lines`, a jsonb array of
 * plan lines, and `advertiser` are SQL of the outer statement): a JSON array of the rows, so the
 * plan and its creatives come back in one round trip. Ids that are not uuids name nothing, as in
 * `planCreativeRefs`.
 */
export function currentCreativesOfLines(db: Knex, lines: string, advertiser: string): { sql: string; bindings: readonly Knex.Value[] } {
  const ids = `array(select x::uuid from jsonb_array_elements(${lines}) l, jsonb_array_elements_text(l->'creativeIds') x
                      where x ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')`;
  const q = currentCreatives(db, db.raw(advertiser)).whereRaw(`c.id = any(${ids})`).toSQL();
  return { sql: `(select coalesce(json_agg(r), '[]'::json) from (${q.sql}) r)`, bindings: q.bindings };
}

/**
 * The current versions of each line's creatives, as plan lines reference them, read in one query
 * for all lines (or given, read with the plan: `currentCreativesOfLines`); any id not the
 * caller's (or out of its product scope) is a 404, and a creative made for another channel than
 * its line's a 400. Lines and ids are checked in order, so the first bad one is the one reported.
 */
export async function planCreativeRefs(
  db: Knex,
  p: Principal,
  lines: ReadonlyArray<{ creativeIds: readonly string[]; channel: string }>,
  read?: readonly CurrentCreativeRow[],
): Promise<CreativeRef[][]> {
  const ids = [...new Set(lines.flatMap((l) => l.creativeIds).filter(isUuid))];
  // One statement text for any number of ids, prepared: read at every approval and launch, and planned in more time than it runs.
  const rows =
    read ??
    (ids.length
      ? await rowsPrepared<CurrentCreativeRow>(db, currentCreatives(db, p.advertiserId).whereRaw('c.id = any(?::uuid[])', [ids]))
      : []);
  // Out-of-product creatives are as invisible as another tenant's.
  const found = new Map(rows.filter((r) => (p.channels as string[]).includes(r.channel as string)).map((r) => [r.id as string, r]));
  return lines.map(({ creativeIds, channel }) =>
    creativeIds.map((id) => {
      // PostgreSQL reads a uuid in either case and answers in lower case.
      const c = found.get(id.toLowerCase());
      if (!c) throw notFound();
      if (c.channel !== channel) {
        throw badRequest(
          `Creative ${id} is for ${c.channel as string}, not ${channel}.`,
          [{ path: 'body.lines', message: 'creative channel differs from the line' }],
          'creative_channel_mismatch',
        );
      }
      return {
        id,
        name: c.name as string,
        format: c.format as string,
        assetUrl: `/files/assets/${c.asset_name as string}`,
        assetFingerprint: c.asset_fingerprint as string,
        version: c.version as number,
        metadataDigest: c.metadata_digest as string,
      };
    }),
  );
}
