import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The AdCP SDK is about a fifth of an idle service's memory: a deployment with no AdCP seller
 * must not load it. Counted in a plain node process (jest's module registry is its own).
 */
const ROOT = path.resolve(__dirname, '../..');

async function sdkModulesAfter(script: string): Promise<number> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `(async () => { ${script}; console.log(Object.keys(require.cache).filter((k) => k.includes('@adcp/sdk')).length); })()`,
    ],
    { cwd: ROOT, env: { PATH: process.env.PATH }, timeout: 60_000 },
  );
  return Number(stdout.trim().split('\n').at(-1));
}

test("the API's and the workers' modules load none of the SDK; asking a seller loads it", async () => {
  const service = "require('./api/server'); require('./api/app'); require('./workers/main')";
  expect(await sdkModulesAfter(service)).toBe(0);
  expect(await sdkModulesAfter(`${service}; await require('./shared/adapters/adcp/sdk').adcpSdk()`)).toBeGreaterThan(0);
}, 120_000);
