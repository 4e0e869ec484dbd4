// The README's test command: jest, then the console's browser suite (Playwright, Debian's
// chromium). Arguments go to jest; with `--json --outputFile=<file>` the browser results are
// added to that file's counts, so CI's pass/fail line covers both. Exits non-zero if either fails.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const bin = (name: string) => path.join('node_modules', '.bin', name);
const jest = spawnSync(bin('jest'), args, { stdio: 'inherit' });

const browserReport = path.join('test-results', 'browser-results.json');
fs.mkdirSync(path.dirname(browserReport), { recursive: true });
fs.rmSync(browserReport, { force: true });
const playwright = spawnSync(bin('playwright'), ['test', '--reporter=list,json'], {
  stdio: 'inherit',
  env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', PLAYWRIGHT_JSON_OUTPUT_NAME: browserReport },
});

const outArg = args.find((a) => a.startsWith('--outputFile='));
if (outArg && fs.existsSync(outArg.slice('--outputFile='.length))) {
  const out = outArg.slice('--outputFile='.length);
  const results = JSON.parse(fs.readFileSync(out, 'utf8'));
  // No report at all means the browser suite did not run: that is a failure too.
  const { stats } = fs.existsSync(browserReport)
    ? (JSON.parse(fs.readFileSync(browserReport, 'utf8')) as { stats: { expected: number; unexpected: number; flaky: number } })
    : { stats: { expected: 0, unexpected: 1, flaky: 0 } };
  const passed = stats.expected;
  const failed = stats.unexpected + stats.flaky;
  results.numPassedTests += passed;
  results.numFailedTests += failed;
  results.numTotalTests += passed + failed;
  results.success = results.success && failed === 0 && playwright.status === 0;
  fs.writeFileSync(out, JSON.stringify(results));
}
process.exit(jest.status !== 0 || playwright.status !== 0 ? 1 : 0);
