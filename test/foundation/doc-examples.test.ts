import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createTestEnv, type TestEnv } from '../support/api';
import { approve, draftCampaign, post } from '../support/bookings';
import { startConsoleService, type ConsoleService } from '../console/support';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '../..');

let env: TestEnv;
let service: ConsoleService;
beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  // As npm start runs them: the persona extraction the examples ask for has a worker.
  await env.workers({ WORKER_QUEUES: 'personas' });
});
afterAll(() => env.close());

/** The shell blocks of a page that call the API with curl, in the order the page gives them. */
function curlBlocks(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/^[ \t]*```sh\n([\s\S]*?)^[ \t]*```/gm)]
    .map((m) => m[1]!.replace(/^ {3}/gm, ''))
    .filter((b) => /\bcurl\b/.test(b));
}

/** The page's own way to get a token (`TOKEN=$(npm run -s token -- …)`), or the README's. */
function tokenLine(file: string): string {
  const find = (f: string) => /TOKEN=\$\(npm run -s token -- [^)`\n]+\)/.exec(fs.readFileSync(path.join(ROOT, f), 'utf8'))?.[0];
  return find(file) ?? find('README.md')!;
}

const PAGES = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));

/**
 * Runs a page's curl blocks one after another against the started service, as a reader would
 * paste them: `npm run -s token` is the real token command on this service's development issuer,
 * every curl fails on an HTTP error (`--fail-with-body`), and what a block sets, the next one sees.
 */
async function runPage(file: string, given: (block: string) => Promise<Record<string, string>>) {
  const state = path.join(env.dataDir, `${path.basename(file)}.state.sh`);
  fs.writeFileSync(state, '');
  const { AUTH_JWKS_URL: _jwks, ...tokenEnv } = env.processEnv();
  const prelude = [
    'set -euo pipefail',
    `npm() { shift 4; (cd ${JSON.stringify(ROOT)} && node --import tsx bin/token.ts "$@"); }`,
    'curl() { command curl --silent --show-error --fail-with-body "$@"; }',
    `source ${JSON.stringify(state)}`,
  ].join('\n');
  const blocks = [tokenLine(file), ...curlBlocks(file)];
  const outputs: string[] = [];
  for (const block of blocks) {
    const vars = Object.entries(await given(block))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join('\n');
    const names = [...new Set([...block.matchAll(/\b([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]!))];
    const script = [
      prelude,
      vars,
      block.replaceAll('http://localhost:3000', service.base),
      ...names.map((n) => `declare -p ${n} >> ${JSON.stringify(state)}`),
    ].join('\n');
    try {
      const { stdout } = await run('bash', ['-c', script], { env: { ...tokenEnv, PATH: process.env.PATH ?? '' }, timeout: 60_000 });
      outputs.push(stdout);
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`${file}: this example failed against the service:\n${block}\n--- stdout\n${e.stdout}\n--- stderr\n${e.stderr}`, {
        cause: err,
      });
    }
  }
  return outputs;
}

describe("the README's and docs' curl examples run against the started service", () => {
  test('every page with curl examples: each example answers without an HTTP error', async () => {
    const pages = PAGES.filter((f) => curlBlocks(f).length > 0);
    expect(pages).toEqual(expect.arrayContaining(['README.md', 'docs/mcp.md', 'docs/personas.md']));
    const ran: Record<string, string[]> = {};
    for (const file of pages) {
      ran[file] = await runPage(file, async (block): Promise<Record<string, string>> => {
        // The approval step of docs/mcp.md approves what an agent prepared: prepare one, as the assistant would.
        if (!block.includes('$APPROVAL_ID')) return {};
        const person = await service.token({ org: 'acme', user: 'alice' });
        const agent = await service.token({ org: 'acme', user: 'alice', agent: 'flightdeck-assistant' });
        const { campaignId, planVersion } = await draftCampaign(service.api, person, [
          { channel: 'ctv', adapterKey: 'sandbox-ctv', budgetMinor: 10_000 },
        ]);
        await approve(service.api, person, campaignId, planVersion);
        const prepared = await post(service.api, agent, '/api/v1/agent/actions/prepare', {
          name: 'campaign.launch',
          parameters: { campaignId },
          budgetMinor: 10_000,
          currency: 'GBP',
        });
        expect(prepared.status).toBe(201);
        const { approvalId, actionDigest } = (await prepared.json()) as { approvalId: string; actionDigest: string };
        return { APPROVAL_ID: approvalId, ACTION_DIGEST: actionDigest };
      });
    }
    // The README's journey ends with a launch: its booking, queued.
    const journey = ran['README.md']!.at(-1)!;
    const launched = JSON.parse(journey.slice(journey.lastIndexOf('{"booking"'))) as { booking: { status: string; lines: unknown[] } };
    expect(launched.booking).toMatchObject({ status: 'queued' });
    expect(launched.booking.lines).toHaveLength(2);
  });
});
