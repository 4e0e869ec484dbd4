import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { post } from '../support/bookings';
import { runMaintenanceJob } from '../support/maintenance';
import { withoutRequestId } from './support';

let env: TestEnv;
let api: TestApi;
beforeAll(async () => {
  env = await createTestEnv();
  api = await env.api();
});
afterAll(() => env.close());

const artifactDir = () => path.join(env.dataDir, 'artifacts');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

const SAMPLES: Record<string, Buffer> = {
  'application/pdf': Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n'),
  'image/png': Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR-fake-image')]),
  'image/jpeg': Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('JFIF-fake-image')]),
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': Buffer.concat([
    Buffer.from([0x50, 0x4b, 0x03, 0x04]),
    Buffer.from('....[Content_Types].xml....xl/workbook.xml....'),
  ]),
  'application/vnd.ms-excel': Buffer.concat([
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
    Buffer.alloc(64),
    Buffer.from('Workbook', 'utf16le'),
  ]),
  'application/json': Buffer.from('{"respondents": 1000, "market": "london"}'),
  'text/csv': Buffer.from('respondent,exposed,recalled\n1,true,false\n2,false,false\n'),
  'text/plain': Buffer.from('Processing terms: data is held for twelve months. Café ✓'),
};

async function studyOf(token: string, org: string) {
  await env
    .db('workspaces')
    .insert({ id: org, name: org, pixel_key: `px_${randomUUID()}` })
    .onConflict('id')
    .ignore();
  const res = await post(api, token, '/api/v1/brand-lift-studies', { name: 'Awareness lift' });
  return (await json<{ study: { id: string } }>(res)).study.id;
}

function upload(token: string, studyId: string, body: unknown, key: string | null = randomUUID()) {
  return api.fetch(`/api/v1/brand-lift-studies/${studyId}/artifacts`, {
    method: 'POST',
    token,
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const artifact = (mediaType: string, bytes: Buffer, purpose = 'contract') => ({
  purpose,
  mediaType,
  contentBase64: bytes.toString('base64'),
  retainUntil: inDays(365),
});

/** Records and stored files: a refused upload must change neither. */
async function artifactState() {
  const rows = await env.db('study_artifacts').orderBy('id').select('id', 'sha256', 'bytes_deleted_at');
  const files = fs.existsSync(artifactDir()) ? fs.readdirSync(artifactDir()).sort() : [];
  return { rows, files };
}

const studyView = async (token: string, id: string) =>
  (
    await json<{ study: { requiredArtifacts: { present: string[]; missing: string[] }; artifacts: Array<Record<string, unknown>> } }>(
      await api.fetch(`/api/v1/brand-lift-studies/${id}`, { token }),
    )
  ).study;

describe('POST /api/v1/brand-lift-studies/{studyId}/artifacts', () => {
  test.each(Object.keys(SAMPLES))('stores %s content-addressed by SHA-256', async (mediaType) => {
    const human = await env.issuer.token({ org: 'org-art-1', user: 'researcher' });
    const studyId = await studyOf(human, 'org-art-1');
    const bytes = SAMPLES[mediaType]!;
    const res = await upload(human, studyId, artifact(mediaType, bytes));
    expect(res.status).toBe(201);
    const { artifact: stored } = await json<{ artifact: Record<string, unknown> }>(res);
    expect(stored).toMatchObject({
      studyId,
      purpose: 'contract',
      mediaType,
      sha256: sha(bytes),
      sizeBytes: bytes.length,
      bytesRetained: true,
    });
    expect(fs.readFileSync(path.join(artifactDir(), sha(bytes)))).toEqual(bytes);
  });

  test('the study shows which required artifacts it has; the same bytes for two purposes are stored once', async () => {
    const human = await env.issuer.token({ org: 'org-art-2', user: 'researcher' });
    const studyId = await studyOf(human, 'org-art-2');
    expect((await studyView(human, studyId)).requiredArtifacts).toEqual({
      required: ['supplier-quote', 'contract', 'privacy-notice', 'consent', 'processing-terms'],
      present: [],
      missing: ['supplier-quote', 'contract', 'privacy-notice', 'consent', 'processing-terms'],
    });
    const pdf = Buffer.from('%PDF-1.7\nsigned contract and privacy notice\n%%EOF\n');
    const res = await upload(human, studyId, artifact('application/pdf', pdf, 'contract'));
    expect((await json<{ requiredArtifacts: { present: string[] } }>(res)).requiredArtifacts.present).toEqual(['contract']);
    expect((await upload(human, studyId, artifact('application/pdf', pdf, 'privacy-notice'))).status).toBe(201);
    const view = await studyView(human, studyId);
    expect(view.requiredArtifacts).toMatchObject({
      present: ['contract', 'privacy-notice'],
      missing: ['supplier-quote', 'consent', 'processing-terms'],
    });
    expect(view.artifacts.map((a) => a.sha256)).toEqual([sha(pdf), sha(pdf)]);
    expect(fs.readdirSync(artifactDir()).filter((f) => f === sha(pdf))).toHaveLength(1);
  });

  test.each([
    ['PNG bytes declared as PDF', artifact('application/pdf', SAMPLES['image/png']!)],
    ['a PDF declared as JPEG', artifact('image/jpeg', SAMPLES['application/pdf']!)],
    [
      'a zip that is no workbook declared as XLSX',
      artifact('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', Buffer.from('PK\u0003\u0004word/document.xml')),
    ],
    ['text declared as XLS', artifact('application/vnd.ms-excel', Buffer.from('Workbook'))],
    ['JSON that does not parse', artifact('application/json', Buffer.from('{"a": '))],
    ['CSV that is not UTF-8', artifact('text/csv', Buffer.from([0x61, 0x2c, 0xff, 0x0a]))],
    ['text that is not UTF-8', artifact('text/plain', Buffer.from([0xc3, 0x28]))],
    ['base64 with a character outside the alphabet', { ...artifact('text/plain', Buffer.from('hi')), contentBase64: 'aGk*' }],
    ['base64 without its padding', { ...artifact('text/plain', Buffer.from('hi')), contentBase64: 'aGk' }],
    ['one character of base64', { ...artifact('text/plain', Buffer.from('hi')), contentBase64: 'a' }],
    ['empty content', { ...artifact('text/plain', Buffer.from('hi')), contentBase64: '' }],
    ['content one character over 2796204', { ...artifact('text/plain', Buffer.from('hi')), contentBase64: 'A'.repeat(2_796_205) }],
    ['an unknown purpose', artifact('text/plain', Buffer.from('hi'), 'invoice')],
    ['an unknown media type', artifact('image/gif', Buffer.from('GIF89a'))],
    ['an unknown field', { ...artifact('text/plain', Buffer.from('hi')), note: 'x' }],
    ['a missing retainUntil', { purpose: 'contract', mediaType: 'text/plain', contentBase64: 'aGk=' }],
    ['a retainUntil that is not a date-time', { ...artifact('text/plain', Buffer.from('hi')), retainUntil: '2030-01-01' }],
    ['a retainUntil in the past', { ...artifact('text/plain', Buffer.from('hi')), retainUntil: inDays(-1) }],
    ['a retainUntil beyond the maximum retention', { ...artifact('text/plain', Buffer.from('hi')), retainUntil: inDays(2558) }],
    ['a body that is not an object', '[]'],
  ])('%s is a 400 and stores nothing', async (_name, body) => {
    const human = await env.issuer.token({ org: 'org-art-3', user: 'researcher' });
    const studyId = await studyOf(human, 'org-art-3');
    const before = await artifactState();
    const res = await upload(human, studyId, body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await artifactState()).toEqual(before);
  });

  test('a raw body of exactly 2,800,300 bytes is accepted and one byte more is a 413 that stores nothing', async () => {
    const human = await env.issuer.token({ org: 'org-art-4', user: 'researcher' });
    const studyId = await studyOf(human, 'org-art-4');
    // The largest content: 2,796,204 base64 characters of plain text.
    const text = Buffer.alloc((2_796_204 / 4) * 3, 'a');
    const payload = JSON.stringify(artifact('text/plain', text));
    const exact = payload + ' '.repeat(2_800_300 - Buffer.byteLength(payload));
    expect(Buffer.byteLength(exact)).toBe(2_800_300);
    const before = await artifactState();
    const over = await upload(human, studyId, `${exact} `);
    expect(over.status).toBe(413);
    expect(over.headers.get('content-type')).toMatch(/problem\+json/);
    expect(await artifactState()).toEqual(before);
    const ok = await upload(human, studyId, exact);
    expect(ok.status).toBe(201);
    expect((await json<{ artifact: { sizeBytes: number } }>(ok)).artifact.sizeBytes).toBe(2_097_153);
  });

  test('a delegated agent is refused with 403 before its body is read, and nothing is stored', async () => {
    const human = await env.issuer.token({ org: 'org-art-5', user: 'researcher' });
    const agent = await env.issuer.token({ org: 'org-art-5', user: 'researcher', agent: 'planner-bot' });
    const studyId = await studyOf(human, 'org-art-5');
    const before = await artifactState();
    const res = await upload(agent, studyId, artifact('application/pdf', SAMPLES['application/pdf']!));
    expect(res.status).toBe(403);
    expect(await json(res)).toMatchObject({ code: 'human_required' });
    const huge = await upload(agent, studyId, ' '.repeat(2_800_301));
    expect(huge.status).toBe(403);
    expect(await artifactState()).toEqual(before);
  });

  test('an Idempotency-Key is required; the same key and body replays the first artifact; another body with it is a 409', async () => {
    const human = await env.issuer.token({ org: 'org-art-6', user: 'researcher' });
    const studyId = await studyOf(human, 'org-art-6');
    const body = artifact('text/plain', Buffer.from('consent wording v1'), 'consent');
    const before = await artifactState();
    const noKey = await upload(human, studyId, body, null);
    expect(noKey.status).toBe(400);
    expect(await artifactState()).toEqual(before);
    const key = randomUUID();
    const first = await upload(human, studyId, body, key);
    const again = await upload(human, studyId, body, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(await json(again)).toEqual(await json(first));
    expect(await env.db('study_artifacts').where({ study_id: studyId })).toHaveLength(1);
    expect((await upload(human, studyId, { ...body, purpose: 'contract' }, key)).status).toBe(409);
  });

  test("another tenant's study is a 404 identical to one that never existed, and nothing is stored", async () => {
    const owner = await env.issuer.token({ org: 'org-art-7', user: 'researcher' });
    const stranger = await env.issuer.token({ org: 'org-art-8', user: 'researcher' });
    const studyId = await studyOf(owner, 'org-art-7');
    const before = await artifactState();
    const body = artifact('application/pdf', SAMPLES['application/pdf']!);
    const foreign = await upload(stranger, studyId, body);
    const never = await upload(stranger, randomUUID(), body);
    expect(foreign.status).toBe(404);
    expect(never.status).toBe(404);
    expect(withoutRequestId(await json(foreign))).toEqual(withoutRequestId(await json(never)));
    expect(await artifactState()).toEqual(before);
    expect((await upload('', studyId, body)).status).toBe(401);
  });

  test('the retention sweep deletes bytes past retainUntil, keeps the record and digest, and keeps bytes another record still retains', async () => {
    const human = await env.issuer.token({ org: 'org-art-9', user: 'researcher' });
    const studyId = await studyOf(human, 'org-art-9');
    const expiring = Buffer.from('%PDF-1.7\nquote that expires\n%%EOF\n');
    const shared = Buffer.from('%PDF-1.7\nterms kept by another record\n%%EOF\n');
    const ids: Record<string, string> = {};
    for (const [name, bytes, purpose] of [
      ['expiring', expiring, 'supplier-quote'],
      ['sharedOld', shared, 'processing-terms'],
      ['sharedLive', shared, 'contract'],
    ] as const) {
      const res = await upload(human, studyId, artifact('application/pdf', bytes, purpose));
      ids[name] = (await json<{ artifact: { id: string } }>(res)).artifact.id;
    }
    // As if their retention had run out.
    await env
      .db('study_artifacts')
      .whereIn('id', [ids.expiring!, ids.sharedOld!])
      .update({ retain_until: new Date(Date.now() - 60_000) });
    const workers = await env.workers();
    try {
      // The hourly schedule also fires when the worker starts; either run may be the one that deleted.
      expect(await runMaintenanceJob(env, 'sweep-artifact-retention')).toEqual({ deleted: expect.any(Number) });
    } finally {
      await workers.close();
    }
    expect(fs.existsSync(path.join(artifactDir(), sha(expiring)))).toBe(false);
    expect(fs.existsSync(path.join(artifactDir(), sha(shared)))).toBe(true);
    const view = await studyView(human, studyId);
    const byId = new Map(view.artifacts.map((a) => [a.id, a]));
    expect(byId.get(ids.expiring!)).toMatchObject({ sha256: sha(expiring), bytesRetained: false });
    expect(byId.get(ids.sharedOld!)).toMatchObject({ sha256: sha(shared), bytesRetained: false });
    expect(byId.get(ids.sharedLive!)).toMatchObject({ bytesRetained: true });
    // The record still counts towards the study's requirements.
    expect(view.requiredArtifacts.present).toEqual(['supplier-quote', 'contract', 'processing-terms']);
  });

  test('the study draft states which artifact purposes it still needs', async () => {
    const org = 'org-art-10';
    const human = await env.issuer.token({ org, user: 'researcher' });
    const studyId = await studyOf(human, org);
    await env.db('wallets').insert({ advertiser_id: org, balance_minor: 1_000_000 }).onConflict('advertiser_id').ignore();
    const { quote } = await json<{ quote: { id: string } }>(
      await post(api, human, `/api/v1/brand-lift-studies/${studyId}/quotes`, { sampleSize: 1000 }),
    );
    const { approval } = await json<{ approval: { id: string } }>(
      await post(api, human, `/api/v1/brand-lift-studies/${studyId}/approvals`, { quoteId: quote.id }),
    );
    expect((await upload(human, studyId, artifact('text/plain', Buffer.from('consent text'), 'consent'))).status).toBe(201);
    const drafted = await api.fetch(`/api/v1/brand-lift-studies/${studyId}/draft`, {
      method: 'POST',
      token: human,
      headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ expectedRevision: 1, expectedConnectionRevision: null, quoteId: quote.id, approvalId: approval.id }),
    });
    expect(drafted.status).toBe(200);
    const { study } = await json<{ study: { status: string; requiredArtifacts: { missing: string[] } } }>(drafted);
    expect(study.status).toBe('drafted');
    expect(study.requiredArtifacts.missing).toEqual(['supplier-quote', 'contract', 'privacy-notice', 'processing-terms']);
  });
});
