import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LabelledCase } from '../test/personas/evaluate';
import { figures } from './support';
import type { BenchService } from './service';

const PERSONA_REQUESTS = Number(process.env.BENCH_PERSONA_REQUESTS ?? 200);
const TARGET_P95_MS = 50;

/** `POST /api/v1/personas/extract` one at a time: the HTTP call, the queue round trip to the persona worker and the store. */
export async function benchPersonaQueue(service: BenchService): Promise<void> {
  const dir = path.resolve(__dirname, '..', 'test', 'personas');
  const briefs = (JSON.parse(readFileSync(path.join(dir, 'dev-set.json'), 'utf8')) as LabelledCase[]).map((c) => c.brief);
  const times: number[] = [];
  let failed = 0;
  for (let i = 0; i < PERSONA_REQUESTS; i++) {
    const t0 = performance.now();
    const res = await fetch(`${service.url}/api/v1/personas/extract`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ nlBrief: briefs[i % briefs.length] }),
    });
    await res.arrayBuffer();
    if (res.status !== 200 && res.status !== 201) failed++;
    else if (i >= 10) times.push(performance.now() - t0); // the first few warm the worker
  }
  times.sort((a, b) => a - b);
  const at = (q: number): number => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  const p95 = at(0.95);
  console.log('Persona extraction through the API and the persona queue (sequential)');
  console.log(
    `  ${times.length} extractions   p50 ${at(0.5).toFixed(1)} ms   p95 ${p95.toFixed(1)} ms   max ${at(1).toFixed(1)} ms${failed ? `   (${failed} failed)` : ''}`,
  );
  console.log(`  target p95 < ${TARGET_P95_MS} ms: ${p95 < TARGET_P95_MS ? 'met' : 'NOT met'}\n`);
  figures.push({
    name: 'persona extraction p95 incl. queue round trip',
    value: p95,
    unit: 'ms',
    failed,
    target: `< ${TARGET_P95_MS} ms`,
    met: failed === 0 && p95 < TARGET_P95_MS,
  });
}
