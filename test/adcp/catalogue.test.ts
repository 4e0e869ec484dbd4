import { sellersAt } from '../support/adcp-env';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { startExampleSeller, type RunningSeller } from '../support/adcp-sellers';
import { freePort } from '../support/ports';

let seller: RunningSeller;
let env: TestEnv;
let api: TestApi;

const ACCOUNT = { brand: { domain: 'acmeoutdoor.example' }, operator: 'acmeoutdoor.example' };

beforeAll(async () => {
  seller = await startExampleSeller('non_guaranteed');
  env = await createTestEnv();
  // `ctl` is configured at an address where nothing listens: a seller that is down.
  api = await env.api({ ADCP_SELLERS: sellersAt({ spot: seller.agentUrl, ctl: `http://127.0.0.1:${await freePort()}/mcp` }) });
}, 60_000);
afterAll(async () => {
  await env?.close();
  await seller?.stop();
});

async function workspace(org: string, access: boolean) {
  const token = await env.issuer.token({ org, user: `${org}-buyer` });
  expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
  if (access) {
    for (const key of ['adcp-spot', 'adcp-ctl']) {
      await env.db('supplier_credentials').insert({
        adapter_key: key,
        advertiser_id: org,
        secret_ref: 'env:FLIGHTDECK_TEST_ADCP_TOKEN',
        approved_at: new Date(),
        account: JSON.stringify(ACCOUNT),
      });
    }
  }
  return token;
}

interface AdapterView {
  key: string;
  kind: string;
  modes: string[];
  seller?: {
    capabilities: { idempotency: { supported: boolean; replayTtlSeconds: number | null }; majorVersions: number[] } | null;
    unavailable: string | null;
  };
}

describe('AdCP sellers in the catalogue', () => {
  test('each seller is an adapter with its declared capabilities; one that is down says so and the others still show', async () => {
    const token = await workspace('org-c1', false);
    const res = await api.fetch('/api/v1/adapters', { token });
    expect(res.status).toBe(200);
    const { adapters } = await json<{ adapters: AdapterView[] }>(res);
    const spot = adapters.find((a) => a.key === 'adcp-spot')!;
    expect(spot).toMatchObject({ kind: 'adcp', modes: ['live'] });
    expect(spot.seller!.capabilities).toMatchObject({ majorVersions: [3], idempotency: { supported: true, replayTtlSeconds: 86400 } });
    expect(adapters.find((a) => a.key === 'adcp-acme-sandbox')).toMatchObject({ modes: ['sandbox'] });
    expect(adapters.find((a) => a.key === 'adcp-ctl')!.seller).toMatchObject({ capabilities: null, unavailable: expect.any(String) });
    expect(adapters.find((a) => a.key === 'sandbox-ctv')).toMatchObject({ kind: 'sandbox' });
    expect(adapters.find((a) => a.key === 'sandbox-ctv')!.seller).toBeUndefined();
  }, 30_000);

  test("a workspace with access lists the seller's products and pricing options for a brief", async () => {
    const token = await workspace('org-c2', true);
    const res = await api.fetch('/api/v1/adapters/adcp-spot/products?channel=ctv&brief=Outdoor%20screens%20near%20stations', { token });
    expect(res.status).toBe(200);
    const { products } = await json<{ products: Array<{ productId: string; pricingOptions: Array<Record<string, unknown>> }> }>(res);
    expect(products.length).toBeGreaterThan(0);
    const product = products.find((p) => p.productId === 'acme_dooh_remnant_q2')!;
    expect(product.pricingOptions).toEqual([
      expect.objectContaining({ pricingOptionId: 'cpm_floor', pricingModel: 'cpm', currency: 'USD', minSpend: 500 }),
    ]);
  }, 30_000);

  test('bad product requests are refused with the right status; a seller that is down is a 503', async () => {
    const token = await workspace('org-c3', true);
    const noAccess = await workspace('org-c4', false);
    const cases: Array<[string, string, number, string?]> = [
      ['/api/v1/adapters/adcp-spot/products?channel=ctv', token, 400],
      ['/api/v1/adapters/adcp-spot/products?channel=ctv&brief=x&personaId=p', token, 400],
      ['/api/v1/adapters/adcp-spot/products?channel=ctv&brief=x&extra=1', token, 400],
      ['/api/v1/adapters/adcp-spot/products?channel=nope&brief=x', token, 400],
      ['/api/v1/adapters/adcp-nope/products?channel=ctv&brief=x', token, 404],
      ['/api/v1/adapters/sandbox-ctv/products?channel=ctv&brief=x', token, 404],
      ['/api/v1/adapters/adcp-spot/products?channel=ctv&personaId=per-missing', token, 404],
      ['/api/v1/adapters/adcp-spot/products?channel=audio&brief=x', token, 422, 'adapter_channel_unsupported'],
      ['/api/v1/adapters/adcp-spot/products?channel=ctv&brief=x', noAccess, 422, 'supplier_access_required'],
      ['/api/v1/adapters/adcp-ctl/products?channel=ctv&brief=x', token, 503, 'dependency_unavailable'],
    ];
    // A caller whose product leaves out ctv asks as if the channel did not exist.
    const doohOnly = await env.issuer.token({ org: 'org-c3', user: 'org-c3-buyer', channels: ['dooh'] });
    cases.push(['/api/v1/adapters/adcp-spot/products?channel=ctv&brief=x', doohOnly, 404]);
    for (const [path, who, status, code] of cases) {
      const res = await api.fetch(path, { token: who });
      expect([path, res.status]).toEqual([path, status]);
      if (code) expect((await json<{ code: string }>(res)).code).toBe(code);
    }
  }, 60_000);
});
