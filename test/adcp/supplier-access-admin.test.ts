import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { runScript } from '../support/processes';
import { startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { grantSupplierAccess } from '../../shared/adapters/supplier-access';

/**
 * `npm run admin -- suppliers grant|revoke|list`: ops give a workspace access to a seller, naming
 * its account there, in a process of its own on the deployment's configuration; the API buys (or
 * refuses to) on what the command recorded.
 */
let seller: TestSeller;
let env: TestEnv;
let api: TestApi;
let sellers: string;

beforeAll(async () => {
  seller = await startTestSeller();
  env = await createTestEnv();
  sellers = sellersAt({ ctl: seller.agentUrl });
  api = await env.api({ ADCP_SELLERS: sellers });
}, 60_000);
afterAll(async () => {
  await env?.close();
  await seller?.stop();
});

const admin = (...args: string[]) => runScript('bin/admin.ts', ['suppliers', ...args], env.processEnv({ ADCP_SELLERS: sellers }));
const ACCOUNT = '{"brand":{"domain":"acme.example"},"operator":"agency.example"}';

/** A workspace made by its first request, and its buyer's token. */
async function workspace(org: string) {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
  return token;
}
const products = (token: string) => api.fetch('/api/v1/adapters/adcp-ctl/products?channel=ctv&brief=Screens', { token });
const rows = (org: string) =>
  env
    .db('supplier_credentials')
    .where({ advertiser_id: org })
    .orderBy('id')
    .select('adapter_key', 'status', 'account', 'secret_ref', env.db.raw('approved_at is not null as approved'));

test('grant records approved access naming the account, and the workspace can buy from the seller; revoke ends it; each prints what it did', async () => {
  const token = await workspace('org-sa1');
  const before = await products(token);
  expect(before.status).toBe(422);
  expect((await json<{ code: string }>(before)).code).toBe('supplier_access_required');

  const granted = await admin('grant', '--org', 'org-sa1', '--adapter', 'adcp-ctl', '--account', ACCOUNT);
  expect(granted).toMatchObject({
    code: 0,
    stdout: `supplier access adcp-ctl for org-sa1: granted (account ${ACCOUNT}, credential env:FLIGHTDECK_TEST_ADCP_TOKEN, approved)\n`,
  });
  expect(await rows('org-sa1')).toEqual([
    {
      adapter_key: 'adcp-ctl',
      status: 'active',
      account: JSON.parse(ACCOUNT),
      secret_ref: 'env:FLIGHTDECK_TEST_ADCP_TOKEN',
      approved: true,
    },
  ]);
  expect((await products(token)).status).toBe(200);

  // The same grant again changes nothing; another account replaces the first, still one active row.
  expect((await admin('grant', '--org', 'org-sa1', '--adapter', 'adcp-ctl', '--account', ACCOUNT)).stdout).toMatch(/: unchanged \(/);
  const moved = '{"brand":{"domain":"acme.example"},"operator":"acme.example"}';
  expect((await admin('grant', '--org', 'org-sa1', '--adapter', 'adcp-ctl', '--account', moved)).stdout).toMatch(/: updated \(/);
  expect((await rows('org-sa1')).map((r) => [r.status, r.account])).toEqual([['active', JSON.parse(moved)]]);

  const listed = await admin('list', '--org', 'org-sa1');
  expect(listed.code).toBe(0);
  expect(listed.stdout).toMatch(
    new RegExp(`^org-sa1\\tadcp-ctl\\tactive\\t\\d{4}-\\d\\d-\\d\\dT[^\\t]+\\t${escape(moved)}\\tenv:FLIGHTDECK_TEST_ADCP_TOKEN$`, 'm'),
  );

  expect(await admin('revoke', '--org', 'org-sa1', '--adapter', 'adcp-ctl')).toMatchObject({
    code: 0,
    stdout: 'supplier access adcp-ctl for org-sa1: revoked\n',
  });
  expect((await products(token)).status).toBe(422);
  expect((await admin('revoke', '--org', 'org-sa1', '--adapter', 'adcp-ctl')).stdout).toBe(
    'supplier access adcp-ctl for org-sa1: no-access\n',
  );
  expect((await admin('list', '--org', 'org-sa1')).stdout).toMatch(/^org-sa1\tadcp-ctl\trevoked\t/m);
  expect((await admin('list', '--org', 'org-sa-none')).stdout).toBe('no supplier access\n');
}, 120_000);

test('a live adapter takes access without an account, with where its credential is kept', async () => {
  await workspace('org-sa2');
  const granted = await admin('grant', '--org', 'org-sa2', '--adapter', 'live-ctv', '--secret-ref', 'vault:suppliers/ctv/org-sa2');
  expect(granted).toMatchObject({
    code: 0,
    stdout: 'supplier access live-ctv for org-sa2: granted (credential vault:suppliers/ctv/org-sa2, approved)\n',
  });
  expect(await rows('org-sa2')).toEqual([
    { adapter_key: 'live-ctv', status: 'active', account: null, secret_ref: 'vault:suppliers/ctv/org-sa2', approved: true },
  ]);
}, 60_000);

test('grants made at once for one workspace leave it one active row', async () => {
  await workspace('org-sa4');
  const grant = (operator: string) =>
    grantSupplierAccess(env.db, {
      advertiserId: 'org-sa4',
      adapterKey: 'adcp-ctl',
      account: { brand: { domain: 'acme.example' }, operator },
      secretRef: 'env:FLIGHTDECK_TEST_ADCP_TOKEN',
    });
  // Connections open first, so the grants really run side by side.
  await Promise.all([1, 2, 3, 4].map(() => env.db.raw('select pg_sleep(0.05)')));
  const outcomes = await Promise.all(['a.example', 'b.example', 'c.example', 'd.example'].map(grant));
  expect(outcomes.filter((o) => o === 'granted')).toHaveLength(1);
  expect((await rows('org-sa4')).filter((r) => r.status === 'active')).toHaveLength(1);
});

describe('bad input is refused with a clear message and a non-zero exit, and changes nothing', () => {
  test.each([
    [
      'an unknown adapter key',
      ['grant', '--org', 'org-sa3', '--adapter', 'adcp-nope', '--account', ACCOUNT],
      /unknown adapter key adcp-nope; those that take supplier access here: .*adcp-ctl/,
    ],
    ['an adapter that needs no access', ['grant', '--org', 'org-sa3', '--adapter', 'sandbox-ctv'], /sandbox-ctv needs no supplier access/],
    [
      'an account that is not JSON',
      ['grant', '--org', 'org-sa3', '--adapter', 'adcp-ctl', '--account', '{brand: acme}'],
      /--account is not JSON/,
    ],
    [
      'an account without its operator',
      ['grant', '--org', 'org-sa3', '--adapter', 'adcp-ctl', '--account', '{"brand":{"domain":"acme.example"}}'],
      /--account is not an AdCP account reference \(operator: /,
    ],
    [
      'an account whose brand is not a domain',
      ['grant', '--org', 'org-sa3', '--adapter', 'adcp-ctl', '--account', '{"brand":{"domain":"Acme Drinks"},"operator":"acme.example"}'],
      /brand\.domain: a lower-case domain name/,
    ],
    [
      'an account with a key it does not take',
      [
        'grant',
        '--org',
        'org-sa3',
        '--adapter',
        'adcp-ctl',
        '--account',
        '{"brand":{"domain":"acme.example"},"operator":"acme.example","sandbox":true}',
      ],
      /--account is not an AdCP account reference/,
    ],
    ['a seller without an account', ['grant', '--org', 'org-sa3', '--adapter', 'adcp-ctl'], /--account is required for an AdCP seller/],
    [
      'an account for a supplier that is no seller',
      ['grant', '--org', 'org-sa3', '--adapter', 'live-ctv', '--secret-ref', 'env:X', '--account', ACCOUNT],
      /--account is for AdCP sellers/,
    ],
    [
      'a live adapter without its credential',
      ['grant', '--org', 'org-sa3', '--adapter', 'live-ctv'],
      /--secret-ref is required for live-ctv/,
    ],
    [
      'a secret where its reference goes',
      ['grant', '--org', 'org-sa3', '--adapter', 'live-ctv', '--secret-ref', 'sk_live_abc'],
      /--secret-ref: .*never the secret itself/,
    ],
    [
      'an unknown workspace',
      ['grant', '--org', 'org-never-seen', '--adapter', 'adcp-ctl', '--account', ACCOUNT],
      /unknown workspace org-never-seen/,
    ],
    ['no workspace', ['grant', '--adapter', 'adcp-ctl', '--account', ACCOUNT], /--org \(the workspace\) is required/],
    [
      'revoking on an unknown workspace',
      ['revoke', '--org', 'org-never-seen', '--adapter', 'adcp-ctl'],
      /unknown workspace org-never-seen/,
    ],
    ['revoking an unknown adapter key', ['revoke', '--org', 'org-sa3', '--adapter', 'adcp-nope'], /unknown adapter key adcp-nope/],
    ['an unknown action', ['approve', '--org', 'org-sa3'], /usage/],
    ['an unknown option', ['grant', '--org', 'org-sa3', '--adapter', 'adcp-ctl', '--acount', ACCOUNT], /--acount/],
  ])(
    '%s',
    async (_what, args, message) => {
      await workspace('org-sa3');
      const before = await env.db('supplier_credentials').orderBy('id').select();
      const r = await admin(...(args as string[]));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
      expect(await env.db('supplier_credentials').orderBy('id').select()).toEqual(before);
    },
    60_000,
  );
});

function escape(s: string) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
