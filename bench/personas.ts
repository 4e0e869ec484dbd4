import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LabelledCase } from '../test/personas/evaluate';
import { extractPersona } from '../shared/personas/extractor';
import { warmNlp } from '../shared/personas/nlp';

/** In-process persona extraction: the NLP model's one-off start cost and memory, then p50/p95 per brief. */
export function benchPersonas(): void {
  const dir = path.resolve(__dirname, '..', 'test', 'personas');
  const briefs = ['dev-set.json', 'dev-extra-set.json', 'holdout-set.json', 'holdout-unseen-set.json'].flatMap((f) =>
    (JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as LabelledCase[]).map((c) => c.brief),
  );
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBefore = process.memoryUsage().rss;
  const { loadMs } = warmNlp();
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  const rssMb = (process.memoryUsage().rss - rssBefore) / 1e6;
  briefs.forEach((b) => extractPersona(b));
  const times: number[] = [];
  for (let round = 0; round < 5; round++) {
    for (const b of briefs) {
      const t0 = performance.now();
      extractPersona(b);
      times.push(performance.now() - t0);
    }
  }
  times.sort((a, b) => a - b);
  const at = (q: number): string => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
  console.log('Persona extraction (in process)');
  console.log(`  NLP model load (once per process)   ${loadMs.toFixed(0)} ms, heap +${heapMb.toFixed(1)} MB, rss +${rssMb.toFixed(1)} MB`);
  console.log(`  ${times.length} extractions                    p50 ${at(0.5)} ms   p95 ${at(0.95)} ms   max ${at(1)} ms\n`);
}
