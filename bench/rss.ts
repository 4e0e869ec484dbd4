import { figures } from './support';
import { startServiceProcess } from './service-process';

const SETTLE_MS = 5_000;

/**
 * The resident memory of `npm start`'s process (API and workers in one process, as
 * `bin/start.ts` runs them) once it is ready and settled, on a database of its own.
 * PostgreSQL and Redis are separate servers and not counted.
 */
export async function benchIdleRss(): Promise<void> {
  const service = await startServiceProcess({ name: 'rss' });
  try {
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const mb = service.rssMb();
    console.log(`RSS of npm start (API and workers, one process), ready and idle: ${mb.toFixed(0)} MB\n`);
    figures.push({ name: 'RSS of npm start, idle', value: mb, unit: 'MB', target: '< 250 MB', met: mb < 250 });
  } finally {
    await service.stop();
  }
}
