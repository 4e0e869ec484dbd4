import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { freePort } from '../support/ports';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { TEST_REDIS_URL } from '../support/env';
import { cleanEnv, runScript, startScript } from '../support/processes';
import { loadDevIssuer } from '../../shared/auth/dev-issuer';
import { createTokenVerifier } from '../../shared/auth/verifier';
import { deleteKeysUnder } from '../support/redis-keys';

let database: TestDatabase;
let dataDir: string;
beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-proc-'));
});
afterAll(async () => {
  await deleteKeysUnder(`fdt:proc:${process.pid}`);
  await deleteKeysUnder(`fdt:emb:${process.pid}`);
  await database.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('configuration at start', () => {
  test('a bad value stops the process with a message naming the variable', async () => {
    const r = await runScript('bin/start.ts', [], cleanEnv({ PORT: 'eighty', DATA_DIR: dataDir }));
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/PORT/);
  }, 120_000);

  test('production refuses a JWKS over plain http with exit 78, naming AUTH_JWKS_URL', async () => {
    const r = await runScript(
      'bin/start.ts',
      [],
      cleanEnv({
        NODE_ENV: 'production',
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        AUTH_ISSUER: 'https://id.example/',
        AUTH_JWKS_URL: 'http://id.example/jwks.json',
        DATA_DIR: dataDir,
      }),
    );
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/AUTH_JWKS_URL must be an https URL/);
  }, 120_000);

  test('production refuses the embedded database and the development issuer', async () => {
    const r = await runScript('bin/start.ts', [], cleanEnv({ NODE_ENV: 'production', DATA_DIR: dataDir }));
    expect(r.code).toBe(78);
    expect(r.stderr).toMatch(/DATABASE_URL/);
    expect(r.stderr).toMatch(/AUTH_JWKS_URL/);
    expect(fs.existsSync(path.join(dataDir, 'postgres'))).toBe(false);
  }, 120_000);
});

describe('npm start', () => {
  test('runs the API and workers on an external database, prints where it listens and how to get a token, and stops cleanly', async () => {
    const service = startScript(
      'bin/start.ts',
      cleanEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: `fdt:proc:${process.pid}`,
        DATA_DIR: dataDir,
      }),
    );
    try {
      const [, url] = await service.waitFor(/listening on (http:\/\/\S+)/);
      expect(service.output()).toMatch(/npm run -s token -- --org/);
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      const token = (await runScript('bin/token.ts', ['--org', 'acme', '--user', 'alice'], cleanEnv({ DATA_DIR: dataDir }))).stdout.trim();
      const ctx = await fetch(`${url}/api/v1/auth/context`, { headers: { authorization: `Bearer ${token}` } });
      expect(ctx.status).toBe(200);
      expect(await ctx.json()).toMatchObject({ user: { id: 'alice' }, advertiser: { id: 'acme' } });
      const jwks = await fetch(`${url}/.well-known/jwks.json`);
      expect(((await jwks.json()) as { keys: Array<{ d?: string }> }).keys[0]!.d).toBeUndefined();
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }
  }, 120_000);

  test('with no DATABASE_URL it runs an embedded PostgreSQL, applies migrations and is ready', async () => {
    const embeddedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-embedded-'));
    const service = startScript(
      'bin/start.ts',
      cleanEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: `fdt:emb:${process.pid}`,
        DATA_DIR: embeddedDir,
        EMBEDDED_PG_PORT: String(await freePort()),
      }),
    );
    try {
      const [, url] = await service.waitFor(/listening on (http:\/\/\S+)/, 120_000);
      const body = (await (await fetch(`${url}/readyz`)).json()) as { status: string; runtime: { database: string; authMode: string } };
      expect(body.status).toBe('ready');
      expect(body.runtime).toMatchObject({ database: 'embedded', authMode: 'development-issuer' });
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
      fs.rmSync(embeddedDir, { recursive: true, force: true });
    }
  }, 150_000);
});

describe('npm start when the embedded PostgreSQL cannot start', () => {
  const embeddedEnv = (dir: string, port: number) =>
    cleanEnv({ PORT: '0', HOST: '127.0.0.1', REDIS_URL: TEST_REDIS_URL, DATA_DIR: dir, EMBEDDED_PG_PORT: String(port) });

  test('with its port taken, it says so and how to fix it, and exits non-zero without a stack trace', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-taken-'));
    // Something that is not PostgreSQL holds the port.
    const held: net.Socket[] = [];
    const squatter = net.createServer((socket) => held.push(socket));
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    try {
      const r = await runScript('bin/start.ts', [], embeddedEnv(dir, (squatter.address() as net.AddressInfo).port), 120_000);
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(r.stderr).toMatch(/embedded development PostgreSQL could not start: port \d+ is already taken/);
      expect(r.stderr).toMatch(/DATABASE_URL/);
      expect(r.stderr).toMatch(/EMBEDDED_PG_PORT/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((r) => squatter.close(r));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);

  test('with its data folder out of reach, it names the folder and the ways out, and exits non-zero without a stack trace', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-private-'));
    // A folder nobody but its owner's superuser can enter, as /root is for other users.
    fs.chmodSync(parent, 0o000);
    try {
      const r = await runScript('bin/start.ts', [], embeddedEnv(path.join(parent, 'data'), await freePort()), 120_000);
      expect(r.code).not.toBe(0);
      expect(r.code).not.toBeNull();
      expect(r.stderr).toMatch(/could not start: its data folder .*postgres cannot be reached/);
      expect(r.stderr).toMatch(/DATABASE_URL/);
      expect(r.stderr).toMatch(/DATA_DIR/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      fs.chmodSync(parent, 0o700);
      fs.rmSync(parent, { recursive: true, force: true });
    }
  }, 150_000);
});

describe('npm run token', () => {
  test('prints a development token with the requested claims, including the agent actor', async () => {
    const r = await runScript(
      'bin/token.ts',
      [
        '--org',
        'acme',
        '--user',
        'alice',
        '--perm',
        'agent:approve',
        '--perm',
        'operator:reconcile',
        '--product',
        'flightdeck-ctv',
        '--agent',
        'planner-bot',
      ],
      cleanEnv({ DATA_DIR: dataDir }),
    );
    expect(r.code).toBe(0);
    const issuer = await loadDevIssuer(dataDir, 'https://api.flightdeck.dev');
    const principal = await createTokenVerifier({ issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks })(r.stdout.trim());
    expect(principal).toEqual({
      userId: 'alice',
      advertiserId: 'acme',
      product: 'flightdeck-ctv',
      channels: ['ctv'],
      permissions: ['agent:approve', 'operator:reconcile'],
      agentClientId: 'planner-bot',
    });
  }, 120_000);

  test('without --org it explains its usage and fails', async () => {
    const r = await runScript('bin/token.ts', ['--user', 'alice'], cleanEnv({ DATA_DIR: dataDir }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--org/);
  }, 120_000);
});

describe('npm run admin', () => {
  const admin = (...args: string[]) => runScript('bin/admin.ts', args, cleanEnv({ DATABASE_URL: database.url, DATA_DIR: dataDir }));

  test('grants, assigns, unassigns and revokes staff, printing what it did', async () => {
    expect((await admin('staff', 'grant', '--user', 'sam', '--name', 'Sam Staff')).stdout).toMatch(/sam: granted/);
    expect((await admin('staff', 'assign', '--user', 'sam', '--org', 'client-9')).stdout).toMatch(/client-9: assigned/);
    expect(await database.db('staff_assignments').where({ staff_user_id: 'sam' }).pluck('advertiser_id')).toEqual(['client-9']);
    expect((await admin('staff', 'list')).stdout).toMatch(/sam\tactive\tclient-9/);
    expect((await admin('staff', 'unassign', '--user', 'sam', '--org', 'client-9')).stdout).toMatch(/unassigned/);
    expect((await admin('staff', 'revoke', '--user', 'sam')).stdout).toMatch(/sam: revoked/);
    expect(await database.db('staff_members').where({ user_id: 'sam' }).first('active')).toEqual({ active: false });
  }, 120_000);

  test('grants, lists and revokes the ops role, printing what it did; staff membership is untouched', async () => {
    expect((await admin('ops', 'grant', 'olive')).stdout).toBe('ops olive: granted\n');
    expect((await admin('ops', 'grant', 'olive')).stdout).toBe('ops olive: unchanged\n');
    expect(await database.db('ops_members').where({ user_id: 'olive' }).first('active')).toEqual({ active: true });
    expect((await admin('ops', 'list')).stdout).toMatch(/^olive\tactive$/m);
    expect((await admin('ops', 'revoke', 'olive')).stdout).toBe('ops olive: revoked\n');
    expect((await admin('ops', 'revoke', 'olive')).stdout).toBe('ops olive: not-ops\n');
    expect((await admin('ops', 'list')).stdout).toMatch(/^olive\trevoked$/m);
    expect(await database.db('ops_members').where({ user_id: 'olive' }).first('active')).toEqual({ active: false });
    expect(await database.db('staff_members').where({ user_id: 'olive' }).first()).toBeUndefined();
  }, 120_000);

  test('ops without a user id prints usage and fails, changing nothing', async () => {
    const before = await database.db('ops_members').count({ n: '*' }).first();
    const r = await admin('ops', 'grant');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/usage/);
    expect(await database.db('ops_members').count({ n: '*' }).first()).toEqual(before);
  }, 120_000);

  test('an unknown action prints usage and fails', async () => {
    const r = await admin('staff', 'promote', '--user', 'sam');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/usage/);
  }, 120_000);
});
