import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { bootMockServer, type MockServerHandle } from '@adcp/sdk/mock-server';
import { freePort } from './ports';
import { HARNESS_TOKEN } from './adcp-env';

/** The SDK's worked example sellers, as shipped in the package. */
const EXAMPLES = path.join(path.dirname(require.resolve('@adcp/sdk/package.json')), 'examples');
const LOOPBACK = path.join(__dirname, 'loopback-listen.cjs');

export interface RunningSeller {
  agentUrl: string;
  /** The upstream ad platform the seller fronts (the SDK's mock server). */
  upstream: MockServerHandle;
  stop(): Promise<void>;
}

/**
 * One of the SDK's example sellers (hello_seller_adapter_guaranteed / _non_guaranteed) in its own
 * process, over the SDK's mock ad platform; both listen on loopback only.
 */
export async function startExampleSeller(kind: 'guaranteed' | 'non_guaranteed'): Promise<RunningSeller> {
  const upstream = await bootMockServer({ specialism: kind === 'guaranteed' ? 'sales-guaranteed' : 'sales-non-guaranteed', port: 0 });
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    ['--require', LOOPBACK, '--import', 'tsx', path.join(EXAMPLES, `hello_seller_adapter_${kind}.ts`)],
    {
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'test',
        PORT: String(port),
        UPSTREAM_URL: upstream.url,
        PUBLIC_AGENT_URL: `http://127.0.0.1:${port}`,
        ADCP_AUTH_TOKEN: HARNESS_TOKEN,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!/running at|adapter on/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill();
      await upstream.close();
      throw new Error(`example seller ${kind} did not start: ${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    agentUrl: `http://127.0.0.1:${port}/mcp`,
    upstream,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill();
        await exited;
      }
      await upstream.close();
    },
  };
}
