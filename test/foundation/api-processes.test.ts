import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { createTestEnv, type TestEnv } from '../support/api';
import { freePort } from '../support/ports';
import { startScript, type Started } from '../support/processes';
import { until } from '../support/wait';

/**
 * `npm run start:web` with API_PROCESSES=2: two processes behind one port. Each request goes
 * out on a new connection, so the primary hands them to the processes in turn; the request
 * log (which names its process) tells which process answered.
 */
let env: TestEnv;
let web: Started;
let port: number;

beforeAll(async () => {
  env = await createTestEnv();
  port = await freePort();
  web = startScript(
    'bin/web.ts',
    env.processEnv({
      API_PROCESSES: '2',
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_EXTRACT_MAX: '4',
      LOG_LEVEL: 'info',
    }),
  );
  await web.waitFor(/api processes listening/, 90_000);
}, 120_000);

afterAll(async () => {
  const code = await web.stop('SIGTERM');
  await env.close();
  expect(code).toBe(0);
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request on a connection of its own. */
function request(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The process whose request log carries this request id. */
async function answeredBy(answer: Answer): Promise<number> {
  const requestId = answer.headers['x-request-id'];
  let pid: number | undefined;
  await until(`the request log of ${requestId}`, async () => {
    for (const line of web.output().split('\n')) {
      if (!line.includes(String(requestId))) continue;
      const entry = JSON.parse(line) as { requestId?: string; pid?: number; res?: unknown };
      if (entry.requestId === requestId && entry.res) pid = entry.pid;
    }
    return pid !== undefined;
  });
  return pid!;
}

describe('API processes behind one port', () => {
  test('an idempotent request replayed on another process gets the first response, and the work is done once', async () => {
    const token = await env.issuer.token({ org: 'org-a', user: 'payer-a' });
    const key = randomUUID();
    const send = () =>
      request(
        'POST',
        '/api/v1/billing/topup/requests',
        { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
        JSON.stringify({ amountMinor: 5_000, currency: 'GBP' }),
      );
    const first = await send();
    expect(first.status).toBe(201);
    const firstPid = await answeredBy(first);
    let replay = await send();
    for (let i = 0; i < 10 && (await answeredBy(replay)) === firstPid; i++) replay = await send();

    expect(await answeredBy(replay)).not.toBe(firstPid);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(JSON.parse(replay.body)).toEqual(JSON.parse(first.body));
    expect(Number((await env.db('funding_requests').count({ n: '*' }))[0]!.n)).toBe(1);
  });

  test('the rate limit is one limit for the client across processes, not one per process', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 10; i++)
      answers.push(await request('POST', '/api/v1/personas/extract', { 'content-type': 'application/json' }, '{}'));
    const pids = new Set(await Promise.all(answers.map(answeredBy)));

    expect(pids.size).toBe(2);
    expect(answers.filter((a) => a.status !== 429)).toHaveLength(4);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(6);
  });

  test('an API process that dies is replaced, and the port keeps answering', async () => {
    const listening = () =>
      web
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"api listening"'))
        .map((l) => (JSON.parse(l) as { pid: number }).pid);
    const [victim] = listening();
    process.kill(victim!, 'SIGKILL');
    await until('a replacement API process', async () => listening().length === 3);

    const answers = await Promise.all(Array.from({ length: 4 }, () => request('GET', '/api/v1/auth/context')));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401]);
    expect(new Set(await Promise.all(answers.map(answeredBy))).has(victim!)).toBe(false);
  });
});
