/** Where the test suite finds PostgreSQL and Redis (the machine's own, by default). */
export const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Each test run has its own id, set by the global setup, so that two runs on one machine
 * (a developer's and CI's) never drop each other's databases.
 */
export const runId = () => process.env.FD_TEST_RUN ?? 'adhoc';
export const templateDatabase = () => `fdtpl_${runId()}`;
export const testDatabasePrefix = () => `fdt_${runId()}_`;

export function databaseUrl(name: string): string {
  const u = new URL(ADMIN_DATABASE_URL);
  u.pathname = `/${name}`;
  return u.toString();
}
