// Scores the rule-based persona extractor against labelled brief sets and
// prints one table per set. Usage: npx tsx bin/eval-personas.ts [path ...]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LabelledCase, evaluate, formatTable } from '../shared/personas/evaluate';
import { createRuleExtractor } from '../shared/personas/extractor';

// Development sets (tuned against) first, then held-out sets (never tuned against).
const SETS_DIR = path.resolve(__dirname, '..', 'test', 'personas');
const DEFAULT_SETS = ['dev-set.json', 'dev-extra-set.json', 'holdout-set.json', 'holdout-unseen-set.json'].map((f) =>
  path.join(SETS_DIR, f),
);

function main(argv: string[]): void {
  const files = argv.length ? argv.map((f) => path.resolve(f)) : DEFAULT_SETS;
  const extractor = createRuleExtractor();
  console.log(`extractor: ${extractor.method} ${extractor.engineVersion}\n`);
  for (const file of files) {
    const cases = JSON.parse(readFileSync(file, 'utf8')) as LabelledCase[];
    const result = evaluate(extractor, cases);
    console.log(formatTable(result, path.relative(process.cwd(), file) || file));
    for (const m of result.misses)
      console.log(`  miss ${m.id} ${m.key}: expected ${JSON.stringify(m.expected)}, got ${JSON.stringify(m.got)}`);
    console.log('');
  }
}

main(process.argv.slice(2));
