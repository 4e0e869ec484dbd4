import { defineConfig } from '@playwright/test';

/**
 * The console in a real browser: Debian's chromium (no browser download), each spec file with
 * its own database, Redis prefix and running service (test/browser/support/world.ts).
 */
export default defineConfig({
  testDir: 'test/browser',
  testMatch: '**/*.spec.ts',
  fullyParallel: false,
  workers: 2,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  forbidOnly: true,
  retries: 0,
  globalSetup: './test/browser/support/global-setup.ts',
  globalTeardown: './test/browser/support/global-teardown.ts',
  outputDir: 'test-results/browser',
  reporter: [['list']],
  use: {
    browserName: 'chromium',
    launchOptions: { executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' },
    viewport: { width: 1366, height: 800 },
    trace: 'off',
  },
});
