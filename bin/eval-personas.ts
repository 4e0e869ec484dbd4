// Scores the rule-based persona extractor against labelled brief sets and
// prints one table per set, then runs the property suites over generated
// briefs and prints their counts (violations must be 0).
// Usage: npx tsx bin/eval-personas.ts [path ...]
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { LabelledCase, evaluate, formatTable } from '../test/personas/evaluate';
import { createRuleExtractor } from '../shared/personas/extractor';
import { runPropertySuites } from '../test/personas/property-suites';

// Development sets (tuned against) first, then held-out sets. The sets live
// in test/personas of the repository, found from here under tsx or from the
// compiled script in dist/bin.
const SETS_DIR = [path.resolve(__dirname, '..', 'test', 'personas'), path.resolve(__dirname, '..', '..', 'test', 'personas')].find((d) =>
  existsSync(path.join(d, 'dev-set.json')),
)!;
const DEFAULT_SETS = [
  'dev-set.json',
  'dev-extra-set.json',
  'holdout-set.json',
  'holdout-unseen-set.json',
  'agency-set.json',
  'agency-unseen-set.json',
  'fresh-set.json',
].map((f) => path.join(SETS_DIR, f));
const PROPERTY_RUNS = 300;

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
  const suites = runPropertySuites(PROPERTY_RUNS);
  console.log(`property suites (generated briefs, seed ${suites[0]?.seed})`);
  console.log(`${'suite'.padEnd(72)}${'cases'.padStart(7)}${'violations'.padStart(12)}`);
  for (const s of suites) {
    console.log(`${s.name.padEnd(72)}${String(s.cases).padStart(7)}${String(s.violations).padStart(12)}`);
    if (s.firstViolation) console.log(`  first violation: ${s.firstViolation}`);
  }
  const violations = suites.reduce((n, s) => n + s.violations, 0);
  console.log(`${'all suites'.padEnd(72)}${String(suites.reduce((n, s) => n + s.cases, 0)).padStart(7)}${String(violations).padStart(12)}`);
  if (violations) process.exitCode = 1;
}

main(process.argv.slice(2));
