import { explainExtraction } from '../../shared/personas/extractor';
import { guardCore } from '../../shared/personas/guard';
import type { SemanticCore } from '../../shared/personas/persona-schema';
import { PROPERTY_SEED, SUITES, runSuite, type Reader } from './property-suites';

// A model's answer passes the same safety checks as the rules' (guard.ts). Here a careless model
// is imitated: the rules' reading plus the usual leaks (what is ruled out read as interests, every
// capitalised word of the brief as a city, ages and a gender from any sentence). The property
// suites must hold for its checked answers as they do for the rules.
const RUNS = 300;

function careless(brief: string, core: SemanticCore): SemanticCore {
  const ruledOut = [...core.exclusions, ...(core.searchNegativeKeywords ?? [])];
  const numbers = (brief.match(/\b\d{2}\b/g) ?? []).map(Number).filter((n) => n >= 16);
  return {
    ...core,
    geo: { ...core.geo, cities: [...core.geo.cities, ...(brief.match(/\b[A-Z][a-z]{2,}\b/g) ?? [])] },
    demographics: {
      ...core.demographics,
      ...(numbers.length ? { ageMin: Math.min(...numbers), ageMax: Math.max(...numbers) } : {}),
      gender: /\b(?:women|mums|female)\b/i.test(brief) ? 'female' : core.demographics.gender,
    },
    interests: [...core.interests, ...ruledOut],
    intentTopics: [...core.intentTopics, ...ruledOut],
  };
}

const unchecked: Reader = (brief) => careless(brief, explainExtraction(brief).persona.semanticCore);
const checked: Reader = (brief) => {
  const reading = explainExtraction(brief);
  const core = reading.persona.semanticCore;
  return guardCore(careless(brief, core), { text: reading.text, roles: reading.roles, core });
};

describe("a careless model's answers, once checked, keep every safety property", () => {
  for (const suite of SUITES) {
    it(suite.name, () => {
      const s = suite as Parameters<typeof runSuite>[0];
      // The imitation leaks (else this test would prove nothing) ...
      expect(runSuite(s, RUNS, PROPERTY_SEED, unchecked).violations).toBeGreaterThan(0);
      // ... and the checks stop every leak.
      const result = runSuite(s, RUNS, PROPERTY_SEED, checked);
      if (result.violations) throw new Error(`${result.violations}/${result.cases} violations; first: ${result.firstViolation}`);
    });
  }
});
