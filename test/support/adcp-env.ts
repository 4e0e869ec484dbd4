/**
 * The AdCP sellers a test file's deployment is configured with. Imported first, before anything
 * reads the adapter catalogue: the catalogue (and the queues) is fixed from ADCP_SELLERS at start.
 * The agent URLs here are placeholders; each test passes the real loopback ones (`sellersAt`).
 */
export const SELLER_TOKEN_ENV = 'FLIGHTDECK_TEST_ADCP_TOKEN';
export const HARNESS_TOKEN = 'sk_harness_do_not_use_in_prod';

export interface TestSeller {
  key: string;
  channels: string[];
  sandbox: boolean;
}

export const TEST_SELLERS: TestSeller[] = [
  /** A live guaranteed seller: answers create_media_buy `submitted`, completes through tasks/get. */
  { key: 'acme', channels: ['ctv', 'dooh'], sandbox: false },
  /** The same seller's sandbox: the booking names a sandbox account and completes at once. */
  { key: 'acme-sandbox', channels: ['ctv', 'dooh'], sandbox: true },
  /** A live non-guaranteed seller: answers synchronously. */
  { key: 'spot', channels: ['ctv'], sandbox: false },
  /** A live seller the test controls (test/support/adcp-test-seller.ts). */
  { key: 'ctl', channels: ['ctv'], sandbox: false },
  /** A sandbox seller the test controls, set up as sellers that do less than they say (Prebid's Sales Agent). */
  { key: 'lax-sandbox', channels: ['ctv'], sandbox: true },
];

const placeholder = 'http://127.0.0.1:9/mcp';
process.env.ADCP_SELLERS = JSON.stringify(TEST_SELLERS.map((s) => ({ ...s, agentUrl: placeholder, credentialEnv: SELLER_TOKEN_ENV })));
process.env[SELLER_TOKEN_ENV] = HARNESS_TOKEN;

/** ADCP_SELLERS for the API and workers, with each seller's real agent URL (and, for some, where it publishes its webhook keys). */
export function sellersAt(
  urls: Record<string, string>,
  webhookJwks: Record<string, string> = {},
  /** Per seller key, more of its settings (what it can be trusted to do: docs/adcp.md). */
  settings: Record<string, Record<string, unknown>> = {},
): string {
  return JSON.stringify(
    TEST_SELLERS.map((s) => ({
      ...s,
      agentUrl: urls[s.key] ?? placeholder,
      credentialEnv: SELLER_TOKEN_ENV,
      ...(webhookJwks[s.key] ? { webhookJwksUrl: webhookJwks[s.key] } : {}),
      ...settings[s.key],
    })),
  );
}
