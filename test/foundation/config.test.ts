import { ConfigError, loadConfig } from '../../shared/config';

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
    const queues = loadConfig({ WORKER_QUEUES: 'creative-reviews,audiences' }).WORKER_QUEUES;
    expect(queues).toContain('audience-sync');
    expect(queues.every((q) => q.startsWith('creative-review.') || q === 'audience-sync')).toBe(true);
    expect(() => loadConfig({ WORKER_QUEUES: 'suppliers,supplier.nowhere' })).toThrow(
      /WORKER_QUEUES: names unknown queue\(s\): supplier.nowhere/,
    );
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
