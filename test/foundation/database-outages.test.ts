import net from 'node:net';
import { createTestEnv, json, type TestApi, type TestEnv } from '../support/api';
import { createDb, type DbOptions, type Knex } from '../../shared/db/knex';
import { until } from '../support/wait';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

const opened: Knex[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.destroy()));
});

/** An API whose database pool has its own bounds (or points somewhere else entirely). */
async function apiWithDb(opts: DbOptions, url = env.database.url): Promise<TestApi> {
  const db = createDb(url, opts);
  opened.push(db);
  return env.api({}, { db });
}

/** A 503 a client can act on: problem+json, transient, and how long to wait. */
async function expectTransient503(res: Response): Promise<Record<string, unknown>> {
  expect(res.status).toBe(503);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  const body = await json(res);
  expect(body).toMatchObject({ status: 503, recovery: 'transient', code: 'database_unavailable' });
  return body;
}

/** Holds an exclusive lock on a table in another transaction until `release` is called. */
async function holdTableLock(table: string): Promise<() => Promise<void>> {
  const trx = await env.db.transaction();
  await trx.raw(`lock table ${table} in access exclusive mode`);
  return async () => {
    await trx.rollback();
  };
}

describe('when PostgreSQL is in trouble, clients get 503 transient with retry-after, never 500', () => {
  test('every pooled connection carries the configured statement and lock timeouts', async () => {
    const db = createDb(env.database.url, { statementTimeoutMs: 1234, lockTimeoutMs: 567 });
    opened.push(db);
    const rows = await db.transaction(async (trx) => {
      const s = await trx.raw('show statement_timeout');
      const l = await trx.raw('show lock_timeout');
      return [s.rows[0].statement_timeout, l.rows[0].lock_timeout];
    });
    expect(rows).toEqual(['1234ms', '567ms']);
  });

  test('with the database down (connection refused), a request is 503 and /readyz is 503', async () => {
    const api = await apiWithDb({ acquireTimeoutMs: 3000 }, 'postgres://postgres@127.0.0.1:9/nothing');
    const body = await expectTransient503(await api.fetch('/api/v1/campaigns', { token: await env.issuer.token({ org: 'org-down' }) }));
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    const ready = await api.fetch('/readyz');
    expect(ready.status).toBe(503);
    expect((await json<{ failed: string[] }>(ready)).failed).toContain('database');
  });

  test('with a database that accepts connections but never answers, a request is 503 and /readyz is 503', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = (silent.address() as net.AddressInfo).port;
      const api = await apiWithDb({ acquireTimeoutMs: 500 }, `postgres://postgres@127.0.0.1:${port}/nothing`);
      await expectTransient503(await api.fetch('/api/v1/campaigns', { token: await env.issuer.token({ org: 'org-silent' }) }));
      const ready = await api.fetch('/readyz');
      expect(ready.status).toBe(503);
      expect((await json<{ failed: string[] }>(ready)).failed).toContain('database');
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  test('with the pool exhausted (acquire timeout), a request is 503', async () => {
    const api = await apiWithDb({ max: 1, acquireTimeoutMs: 300 });
    // The only connection is taken by a transaction that stays open.
    const held = await api.deps.db.transaction();
    try {
      await expectTransient503(await api.fetch('/api/v1/campaigns', { token: await env.issuer.token({ org: 'org-pool' }) }));
    } finally {
      await held.rollback();
    }
    expect((await api.fetch('/api/v1/campaigns', { token: await env.issuer.token({ org: 'org-pool' }) })).status).toBe(200);
  });

  test('a lock held elsewhere past the lock timeout is 503 (lock_not_available), and nothing waits forever', async () => {
    const api = await apiWithDb({ lockTimeoutMs: 200 });
    const token = await env.issuer.token({ org: 'org-lock' });
    expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
    const release = await holdTableLock('campaigns');
    try {
      const body = await expectTransient503(await api.fetch('/api/v1/campaigns', { token }));
      expect(body.detail).toMatch(/timeout/);
    } finally {
      await release();
    }
  });

  test('a statement running past the statement timeout is 503 (query_canceled)', async () => {
    // No lock timeout here, so only the statement timeout can end the wait.
    const api = await apiWithDb({ statementTimeoutMs: 300, lockTimeoutMs: 0 });
    const token = await env.issuer.token({ org: 'org-statement' });
    expect((await api.fetch('/api/v1/auth/context', { token })).status).toBe(200);
    const release = await holdTableLock('campaigns');
    try {
      await expectTransient503(await api.fetch('/api/v1/campaigns', { token }));
      const logged = api.logs.find((l) => (l.err as { code?: string } | undefined)?.code === '57014');
      // Transient: a warning, so an outage does not bury real faults under error lines.
      expect(logged).toMatchObject({ level: 40, code: 'database_unavailable' });
    } finally {
      await release();
    }
  });

  test('a connection dropped mid-statement with no word from the server is 503, not 500', async () => {
    // A TCP relay to PostgreSQL that the test cuts, as a failover or a network fault does.
    const sockets: net.Socket[] = [];
    const relay = net.createServer((client) => {
      const server = net.connect(5432, '127.0.0.1');
      client.pipe(server).pipe(client);
      client.on('error', () => undefined);
      server.on('error', () => undefined);
      sockets.push(client, server);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const port = (relay.address() as net.AddressInfo).port;
    const api = await apiWithDb({ lockTimeoutMs: 0 }, env.database.url.replace(/@[^/]+\//, `@127.0.0.1:${port}/`));
    const token = await env.issuer.token({ org: 'org-cut' });
    const release = await holdTableLock('campaigns');
    try {
      const pending = api.fetch('/api/v1/campaigns', { token });
      await until('the request to wait on the lock', async () => {
        const { rows } = await env.db.raw("select 1 from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%campaigns%'");
        return rows.length > 0;
      });
      for (const socket of sockets) socket.destroy();
      await expectTransient503(await pending);
    } finally {
      await release();
      await new Promise((r) => relay.close(r));
    }
  });
});
