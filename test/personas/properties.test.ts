import { PROPERTY_SEED, SUITES, runSuite } from './property-suites';

// Generated briefs (fast-check, fixed seed): see property-suites.ts for the
// properties. Every case is checked and every violation counted; a failure
// names the seed and the first violating brief. PERSONA_PROPERTY_SEED runs
// another seed.
const seed = Number(process.env['PERSONA_PROPERTY_SEED'] ?? PROPERTY_SEED);
const RUNS = 300;

describe('persona extraction properties over generated briefs', () => {
  for (const suite of SUITES) {
    it(suite.name, () => {
      const result = runSuite(suite as Parameters<typeof runSuite>[0], RUNS, seed);
      expect(result.cases).toBe(RUNS);
      if (result.violations)
        throw new Error(`${result.violations}/${result.cases} violations (seed ${result.seed}); first: ${result.firstViolation}`);
    });
  }
});
