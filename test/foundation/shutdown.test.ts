import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { createTestDatabase, type TestDatabase } from '../support/database';
import { TEST_REDIS_URL } from '../support/env';
import { cleanEnv, startScript, type Started } from '../support/processes';
import { deleteKeysUnder } from '../support/redis-keys';

let database: TestDatabase;
let dataDir: string;
beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-shutdown-'));
});
afterAll(async () => {
  await deleteKeysUnder(`fdt:shutdown:${process.pid}`);
  await database.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The API alone (`npm run start:web`) as its own process, logging at info so the signal shows. */
async function startWeb(extra: Record<string, string> = {}): Promise<{ service: Started; port: number }> {
  const service = startScript(
    'bin/web.ts',
    cleanEnv({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: `fdt:shutdown:${process.pid}`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ...extra,
    }),
  );
  const [, port] = await service.waitFor(/"url":"http:\/\/127\.0\.0\.1:(\d+)"/);
  return { service, port: Number(port) };
}

/** A raw keep-alive HTTP/1.1 connection, so the test sees exactly what the server does with it. */
async function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  let received = '';
  socket.on('data', (c) => (received += String(c)));
  // A reset is what the test looks for not happening: kept, so it fails on what it saw rather than on an uncaught error.
  socket.on('error', (err) => (received += `[socket error: ${err.message}]`));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  const until = async (pattern: RegExp) => {
    while (!pattern.test(received) && !socket.destroyed) await new Promise((r) => setTimeout(r, 20));
  };
  return {
    socket,
    closed,
    received: () => received,
    /** Waits for a status line and headers; `final`: a response other than `100 Continue`. */
    async response(final = false): Promise<string> {
      await until(final ? /HTTP\/1\.1 (?!100 )\d{3}[^\r]*\r\n(?:[^\r]+\r\n)*\r\n/ : /\r\n\r\n/);
      return received;
    },
  };
}

const pixelRequest = (bodyLength: number, expectContinue = false) =>
  `POST /api/v1/t/px_unknown HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\nContent-Type: application/json\r\nContent-Length: ${bodyLength}\r\n${expectContinue ? 'Expect: 100-continue\r\n' : ''}\r\n`;

describe('shutdown on SIGTERM', () => {
  test('an idle keep-alive connection does not hold the process: it is closed and the process exits cleanly', async () => {
    const { service, port } = await startWeb();
    const client = await connect(port);
    client.socket.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n');
    expect(await client.response()).toMatch(/^HTTP\/1\.1 (200|503)/);
    // The connection is now idle and kept alive by both sides.
    const exit = await service.stop('SIGTERM');
    await client.closed;
    expect(exit).toBe(0);
  }, 60_000);

  test('a request in flight when the signal arrives is finished, then its connection is closed', async () => {
    const { service, port } = await startWeb();
    const body = JSON.stringify({ kind: 'pageview' });
    const client = await connect(port);
    // The server's 100 Continue says it has read the request's head: the request is in flight
    // (bytes still unread in the socket when the signal lands are a request not yet received).
    client.socket.write(pixelRequest(body.length, true));
    expect(await client.response()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    service.child.kill('SIGTERM');
    await service.waitFor(/SIGTERM received/);
    client.socket.write(body);
    const answered = (await client.response(true)).replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
    expect(answered).toMatch(/^HTTP\/1\.1 [1-4]\d\d /);
    await client.closed;
    expect(await service.stop()).toBe(0);
  }, 60_000);

  test('a client that never finishes its request is cut off after the grace period, and the process still exits cleanly', async () => {
    const { service, port } = await startWeb({ SHUTDOWN_GRACE_MS: '500' });
    const client = await connect(port);
    client.socket.write(pixelRequest(100) + '{"kind"');
    service.child.kill('SIGTERM');
    await client.closed;
    expect(await service.stop()).toBe(0);
    expect(client.received()).toBe('');
  }, 60_000);
});
