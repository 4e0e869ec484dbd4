import { isUuid } from '../ids';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { conflict, forbidden, notFound } from '../errors';
import { toMinor } from '../db/knex';
import { isHuman, type Principal } from '../auth/principal';
import { findCampaign } from '../campaigns/campaign-store';
import { reserve } from '../wallet/ledger';
import { studyArtifacts } from './artifact-summary';

export const CreateStudySchema = z
  .strictObject({ name: z.string().trim().min(1).max(200), campaignId: z.uuid().optional() })
  .meta({ id: 'CreateStudy' });
export const QuoteRequestSchema = z.strictObject({ sampleSize: z.number().int().min(500).max(20_000) }).meta({ id: 'StudyQuoteRequest' });
export const StudyApprovalSchema = z.strictObject({ quoteId: z.uuid() }).meta({ id: 'StudyApprovalRequest' });
export const DraftStudySchema = z
  .strictObject({
    expectedRevision: z.number().int().min(1).max(2147483647),
    expectedConnectionRevision: z.number().int().min(0).max(2147483647).nullable(),
    quoteId: z.uuid(),
    approvalId: z.uuid(),
  })
  .meta({ id: 'DraftStudy' });

/** The sandbox research provider's price list: a fixed set-up fee plus a per-respondent rate, in GBP minor units. */
export const quotePriceMinor = (sampleSize: number) => 150_000 + sampleSize * 50;

async function loadStudy(db: Knex, p: Principal, id: string, forUpdate = false) {
  if (!isUuid(id)) throw notFound();
  const q = db('brand_lift_studies').where({ id, advertiser_id: p.advertiserId }).first();
  if (forUpdate) q.forUpdate();
  const row = await q;
  if (!row) throw notFound();
  // A study of a campaign outside the caller's product is as invisible as the campaign.
  if (row.campaign_id && !(await findCampaign(db, p, row.campaign_id))) throw notFound();
  return row;
}

export async function studyView(db: Knex, p: Principal, id: string, requiredArtifacts?: readonly string[]) {
  const s = await loadStudy(db, p, id);
  // Sequential on purpose: callers may pass a transaction, which is one connection.
  const quotes = await db('study_quotes').where({ study_id: id }).orderBy('created_at');
  const approvals = await db('study_approvals').where({ study_id: id }).orderBy('created_at');
  const artifacts = await studyArtifacts(db, id, requiredArtifacts);
  return {
    study: {
      id: s.id,
      name: s.name,
      campaignId: s.campaign_id,
      revision: s.revision,
      connectionRevision: s.connection_revision,
      status: s.status,
      quotes: quotes.map((q) => ({ id: q.id, sampleSize: q.sample_size, amountMinor: toMinor(q.amount_minor), currency: q.currency })),
      approvals: approvals.map((a) => ({
        id: a.id,
        quoteId: a.quote_id,
        fundedMinor: toMinor(a.funded_minor),
        approvedBy: a.approved_by,
        used: a.used_at !== null,
      })),
      ...artifacts,
      createdAt: (s.created_at as Date).toISOString(),
    },
  };
}

export async function createStudy(db: Knex, p: Principal, body: z.infer<typeof CreateStudySchema>, requiredArtifacts?: readonly string[]) {
  const campaign = body.campaignId ? await findCampaign(db, p, body.campaignId) : null;
  if (body.campaignId && !campaign) throw notFound();
  const id = randomUUID();
  await db('brand_lift_studies').insert({
    id,
    advertiser_id: p.advertiserId,
    campaign_id: body.campaignId ?? null,
    // A study of a campaign concerns its channels; one without concerns the creating product's.
    scope_channels: campaign ? campaign.channels : p.channels,
    name: body.name,
    created_by: p.userId,
  });
  return studyView(db, p, id, requiredArtifacts);
}

export async function quoteStudy(db: Knex, p: Principal, studyId: string, body: z.infer<typeof QuoteRequestSchema>) {
  await loadStudy(db, p, studyId);
  const id = randomUUID();
  const amount = quotePriceMinor(body.sampleSize);
  await db('study_quotes').insert({
    id,
    study_id: studyId,
    advertiser_id: p.advertiserId,
    sample_size: body.sampleSize,
    amount_minor: amount,
  });
  return { quote: { id, studyId, sampleSize: body.sampleSize, amountMinor: amount, currency: 'GBP' } };
}

/** An explicit human study approval: it reserves the quote's full GBP amount from the wallet, now. */
export async function approveStudy(db: Knex, p: Principal, studyId: string, body: z.infer<typeof StudyApprovalSchema>) {
  if (!isHuman(p)) throw forbidden('Only a human can approve and fund a study.', 'human_required');
  return db.transaction(async (trx) => {
    await loadStudy(trx, p, studyId, true);
    const quote = await trx('study_quotes').where({ id: body.quoteId, study_id: studyId }).first();
    if (!quote) throw notFound();
    // Under the study's row lock: one funded, unused approval at a time, so a study is never paid for twice.
    const open = await trx('study_approvals').where({ study_id: studyId }).whereNull('used_at').first('id');
    if (open) throw conflict('This study already has a funded approval waiting to be used.', 'study_already_funded');
    const amount = toMinor(quote.amount_minor);
    const id = randomUUID();
    if (amount > 0) {
      await reserve(
        trx,
        { advertiserId: p.advertiserId, amountMinor: amount, subjectType: 'study_approval', subjectId: id, actorId: p.userId },
        'this study',
      );
    }
    await trx('study_approvals').insert({
      id,
      study_id: studyId,
      quote_id: quote.id,
      advertiser_id: p.advertiserId,
      funded_minor: amount,
      approved_by: p.userId,
    });
    await trx('study_fund_reservations').insert({ approval_id: id, advertiser_id: p.advertiserId, amount_minor: amount });
    return { approval: { id, studyId, quoteId: quote.id, fundedMinor: amount, currency: 'GBP', used: false } };
  });
}

/**
 * The money a study draft commits: the approved quote's full amount, already funded, so the
 * incremental reservation is 0. Refuses what is not an unused, funded human approval of this quote.
 */
export async function studyCommitment(db: Knex, p: Principal, params: { studyId: string; quoteId: string; approvalId: string }) {
  await loadStudy(db, p, params.studyId);
  const quote = await db('study_quotes').where({ id: params.quoteId, study_id: params.studyId }).first();
  const approval = await db('study_approvals').where({ id: params.approvalId, study_id: params.studyId, quote_id: params.quoteId }).first();
  if (!quote || !approval) throw notFound();
  if (approval.used_at) throw conflict('That study approval has already been used.', 'approval_used', 'terminal');
  const funded = await db('study_fund_reservations').where({ approval_id: approval.id }).first();
  if (!funded || toMinor(funded.amount_minor) !== toMinor(quote.amount_minor))
    throw conflict('The study commitment is not funded.', 'unfunded');
  return { amountMinor: toMinor(quote.amount_minor) };
}

/** Drafts the study against its approved, funded quote (spec 9). The approval is used once. */
export async function draftStudy(
  db: Knex,
  p: Principal,
  studyId: string,
  body: z.infer<typeof DraftStudySchema>,
  requiredArtifacts?: readonly string[],
) {
  return db.transaction(async (trx) => {
    const study = await loadStudy(trx, p, studyId, true);
    if (study.revision !== body.expectedRevision) throw conflict(`The study is at revision ${study.revision}.`, 'revision_conflict');
    if ((study.connection_revision ?? null) !== body.expectedConnectionRevision) {
      throw conflict(`The research connection is at revision ${study.connection_revision ?? 'null'}.`, 'revision_conflict');
    }
    if (study.status !== 'setup') throw conflict('The study has already been drafted.', 'invalid_transition', 'terminal');
    await studyCommitment(trx, p, { studyId, quoteId: body.quoteId, approvalId: body.approvalId });
    await trx('study_approvals').where({ id: body.approvalId }).update({ used_at: trx.fn.now() });
    await trx('brand_lift_studies')
      .where({ id: studyId })
      .update({ status: 'drafted', revision: study.revision + 1, updated_at: trx.fn.now() });
    // The draft states which artifact purposes the study still needs (study.requiredArtifacts.missing).
    return studyView(trx, p, studyId, requiredArtifacts);
  });
}
