import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';

const MIGRATIONS_DIR = path.resolve(__dirname, '..', '..', 'migrations');

interface MigrationModule {
  up(db: Knex): Promise<void>;
  down?(db: Knex): Promise<void>;
}

/**
 * Timestamped, forward-only migrations from `migrations/`. A custom source so the same
 * files load under tsx, jest and the compiled build without knex's own TS loader.
 */
const source: Knex.MigrationSource<string> = {
  async getMigrations() {
    return fs
      .readdirSync(MIGRATIONS_DIR)
      .filter((f) => /^\d{14}_[a-z0-9_]+\.(ts|js)$/.test(f))
      .map((f) => f.replace(/\.(ts|js)$/, ''))
      .sort();
  },
  getMigrationName(name) {
    return name;
  },
  async getMigration(name) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(path.join(MIGRATIONS_DIR, name)) as MigrationModule;
    return { up: mod.up, down: mod.down ?? (async () => undefined) };
  },
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource: source })) as [number, string[]];
  return applied;
}

/** Names of migrations not yet applied; readiness fails while any remain. */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  const [, pending] = (await db.migrate.list({ migrationSource: source })) as [unknown, Array<{ file: string } | string>];
  return pending.map((p) => (typeof p === 'string' ? p : p.file));
}
