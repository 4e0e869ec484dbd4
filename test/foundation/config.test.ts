import { ConfigError, loadConfig } from '../../shared/config/config';
import { requiredQueues, workerQueuesOf } from '../../shared/queues/names';

/** A production configuration that loads: every required variable set as production needs it. */
const PRODUCTION = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://db/flightdeck',
  REDIS_URL: 'redis://redis:6379',
  AUTH_JWKS_URL: 'https://id.example/jwks.json',
  AUTH_ISSUER: 'https://id.example/',
  BILLING_MODE: 'live',
  STRIPE_SECRET_KEY: 'sk_live_example',
  STRIPE_WEBHOOK_SECRET: 'whsec_example',
  SECRETS_KEY: 'c2VjcmV0cy1rZXktZm9yLXRoZS1jb25maWctdGVzdHM=',
  MCP_RESOURCE_URL: 'https://api.example/mcp',
  MCP_EXCHANGE_CLIENT_SECRET: 'mcp-exchange-secret-example',
};

describe('configuration', () => {
  test('defaults give a development service on port 3000 in sandbox mode', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      PORT: 3000,
      EXECUTION_MODE_DEFAULT: 'sandbox',
      WORKER_QUEUES: [],
      RATE_LIMIT_MAX: 300,
      RATE_LIMIT_EXTRACT_MAX: 30,
    });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(c.AUTH_JWKS_URL).toBeUndefined();
  });

  test.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['AUTH_JWKS_URL', 'not a url'],
    ['LOG_LEVEL', 'verbose'],
    ['WORKER_QUEUES', 'supplier.ok,Bad Queue'],
    ['EXECUTION_MODE_DEFAULT', 'production'],
    ['TRUST_PROXY', 'everyone'],
    ['RATE_LIMIT_MAX', '0'],
    ['SECRETS_KEY', 'dG9vIHNob3J0'],
  ])('a bad %s (%s) is refused with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  test('WORKER_QUEUES is a comma-separated list', () => {
    expect(loadConfig({ WORKER_QUEUES: 'supplier.sandbox-ctv, maintenance' }).WORKER_QUEUES).toEqual([
      'supplier.sandbox-ctv',
      'maintenance',
    ]);
  });

  test('WORKER_QUEUES takes roles for whole kinds of work and refuses names it does not know', () => {
    const queues = workerQueuesOf(loadConfig({ WORKER_QUEUES: 'creative-reviews,audiences' }).WORKER_QUEUES);
    expect(queues).toContain('audience-sync');
    expect(queues.every((q) => q.startsWith('creative-review.') || q === 'audience-sync')).toBe(true);
    expect(workerQueuesOf([])).toEqual(requiredQueues());
    const unknown = () => workerQueuesOf(loadConfig({ WORKER_QUEUES: 'suppliers,supplier.nowhere' }).WORKER_QUEUES);
    expect(unknown).toThrow(ConfigError);
    expect(unknown).toThrow(/WORKER_QUEUES: names unknown queue\(s\): supplier.nowhere/);
  });

  test('TRUST_PROXY takes booleans, hop counts and subnets', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, uniquelocal' }).TRUST_PROXY).toBe('loopback, uniquelocal');
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,192.168.0.1' }).TRUST_PROXY).toBe('10.0.0.0/8,192.168.0.1');
  });

  test('production refuses the embedded database, the development issuer and an unset Redis', () => {
    const attempt = () => loadConfig({ NODE_ENV: 'production' });
    expect(attempt).toThrow(/DATABASE_URL/);
    expect(attempt).toThrow(/AUTH_JWKS_URL/);
    expect(attempt).toThrow(/REDIS_URL/);
    expect(attempt).toThrow(/SECRETS_KEY/);
    expect(
      loadConfig({
        NODE_ENV: 'production',
        DATABASE_URL: 'postgres://db/flightdeck',
        REDIS_URL: 'redis://redis:6379',
        AUTH_JWKS_URL: 'https://id.example/jwks.json',
        AUTH_ISSUER: 'https://id.example/',
        BILLING_MODE: 'live',
        STRIPE_SECRET_KEY: 'sk_live_example',
        STRIPE_WEBHOOK_SECRET: 'whsec_example',
        SECRETS_KEY: 'c2VjcmV0cy1rZXktZm9yLXRoZS1jb25maWctdGVzdHM=',
      }).NODE_ENV,
    ).toBe('production');
  });

  test('production refuses sandbox billing, and live billing needs the provider key and webhook secret', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/BILLING_MODE=live/);
    expect(() => loadConfig({ BILLING_MODE: 'live' })).toThrow(/STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET/);
    expect(() => loadConfig({ BILLING_TOPUP_MIN_MINOR: '5000', BILLING_TOPUP_MAX_MINOR: '100' })).toThrow(/BILLING_TOPUP_MIN_MINOR/);
  });

  test('production refuses a JWKS fetched over plain http, naming AUTH_JWKS_URL', () => {
    const production = {
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://db/flightdeck',
      REDIS_URL: 'redis://redis:6379',
      AUTH_ISSUER: 'https://id.example/',
    };
    const attempt = () => loadConfig({ ...production, AUTH_JWKS_URL: 'http://id.example/jwks.json' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/AUTH_JWKS_URL must be an https URL/);
    expect(loadConfig({ ...production, NODE_ENV: 'development', AUTH_JWKS_URL: 'http://id.example/jwks.json' }).AUTH_JWKS_URL).toBe(
      'http://id.example/jwks.json',
    );
  });

  test.each(['MCP_ISSUER', 'MCP_RESOURCE_URL', 'CONSOLE_ISSUER', 'PUBLIC_BASE_URL'] as const)(
    'production refuses a plain-http %s, naming it; development accepts it',
    (name) => {
      const attempt = () => loadConfig({ ...PRODUCTION, [name]: 'http://id.example/' });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(new RegExp(`${name} must be an https URL`));
      expect(loadConfig({ ...PRODUCTION, [name]: 'https://id.example/' })[name]).toBe('https://id.example/');
      expect(loadConfig({ [name]: 'http://id.example/' })[name]).toBe('http://id.example/');
    },
  );

  test('production refuses TRUST_PROXY=true, pointing to hop counts and subnets, and takes those', () => {
    const attempt = () => loadConfig({ ...PRODUCTION, TRUST_PROXY: 'true' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/TRUST_PROXY=true .*number of proxies .*subnets/);
    expect(loadConfig({ ...PRODUCTION, TRUST_PROXY: '1' }).TRUST_PROXY).toBe(1);
    expect(loadConfig({ ...PRODUCTION, TRUST_PROXY: '10.0.0.0/8' }).TRUST_PROXY).toBe('10.0.0.0/8');
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
  });

  test('loopback metadata documents are a development allowance: production refuses it, naming it; unregistered clients are on by default', () => {
    const attempt = () => loadConfig({ ...PRODUCTION, MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK: 'true' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK/);
    expect(loadConfig(PRODUCTION).MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK).toBe(false);
    expect(loadConfig({ MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK: 'true' }).MCP_CLIENT_DOCUMENT_ALLOW_LOOPBACK).toBe(true);
    expect(loadConfig({}).MCP_CLIENT_ID_METADATA_DOCUMENTS).toBe(true);
    expect(loadConfig({ MCP_CLIENT_ID_METADATA_DOCUMENTS: 'false' }).MCP_CLIENT_ID_METADATA_DOCUMENTS).toBe(false);
  });

  test('production refuses the test-only BROWSER_ALLOW_LOOPBACK, naming it; elsewhere it is off unless set', () => {
    const attempt = () => loadConfig({ ...PRODUCTION, BROWSER_ALLOW_LOOPBACK: 'true' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/BROWSER_ALLOW_LOOPBACK=true is for tests/);
    expect(loadConfig({ ...PRODUCTION, BROWSER_ALLOW_LOOPBACK: 'false' }).BROWSER_ALLOW_LOOPBACK).toBe(false);
    expect(loadConfig({}).BROWSER_ALLOW_LOOPBACK).toBe(false);
    expect(loadConfig({ BROWSER_ALLOW_LOOPBACK: 'true' }).BROWSER_ALLOW_LOOPBACK).toBe(true);
  });

  test('the browser role is the browser-jobs queue alone, so a process without Chromium can be left without it', () => {
    expect(workerQueuesOf(loadConfig({ WORKER_QUEUES: 'browser' }).WORKER_QUEUES)).toEqual(['browser-jobs']);
    expect(workerQueuesOf([])).toContain('browser-jobs');
    expect(workerQueuesOf(loadConfig({ WORKER_QUEUES: 'suppliers,webhooks' }).WORKER_QUEUES)).not.toContain('browser-jobs');
  });

  test('with the development issuer the service listens on loopback only, unless told the network is trusted', () => {
    expect(loadConfig({}).HOST).toBe('127.0.0.1');
    expect(loadConfig({ AUTH_JWKS_URL: 'https://id.example/jwks.json', AUTH_ISSUER: 'https://id.example/' }).HOST).toBe('0.0.0.0');
    for (const host of ['127.0.0.1', '::1', 'localhost', '127.0.0.2']) expect(loadConfig({ HOST: host }).HOST).toBe(host);
    for (const host of ['0.0.0.0', '::', '192.168.1.20']) {
      const attempt = () => loadConfig({ HOST: host });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(
        new RegExp(`HOST=${host.replace(/\./g, '\\.')} with the development issuer .*DEV_AUTH_ALLOW_REMOTE=true`, 's'),
      );
    }
    expect(loadConfig({ HOST: '0.0.0.0', DEV_AUTH_ALLOW_REMOTE: 'true' }).HOST).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '0.0.0.0', AUTH_JWKS_URL: 'https://id.example/jwks.json', AUTH_ISSUER: 'https://id.example/' }).HOST).toBe(
      '0.0.0.0',
    );
  });

  test('database timeouts and JWKS staleness have defaults and accept 0 to turn a bound off', () => {
    expect(loadConfig({})).toMatchObject({
      DB_STATEMENT_TIMEOUT_MS: 30_000,
      DB_LOCK_TIMEOUT_MS: 5_000,
      DB_ACQUIRE_TIMEOUT_MS: 10_000,
      AUTH_JWKS_CACHE_MAX_AGE_MS: 600_000,
      AUTH_JWKS_MAX_STALE_MS: 86_400_000,
    });
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0', DB_LOCK_TIMEOUT_MS: '0' })).toMatchObject({
      DB_STATEMENT_TIMEOUT_MS: 0,
      DB_LOCK_TIMEOUT_MS: 0,
    });
    expect(() => loadConfig({ DB_LOCK_TIMEOUT_MS: '-1' })).toThrow(/DB_LOCK_TIMEOUT_MS/);
  });

  test('an empty variable counts as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', PORT: '' }).PORT).toBe(3000);
  });
});
