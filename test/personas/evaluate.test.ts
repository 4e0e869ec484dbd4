import { LabelledCase, evaluate, formatTable } from './evaluate';
import { ExtractedPersona, PersonaExtractor } from '../../shared/personas/extractor';
import { SemanticCore } from '../../shared/personas/persona-schema';

// A fake extractor that returns a fixed core, so the scoring rules are
// tested independently of the real extractor.
type CoreOverrides = Partial<Omit<SemanticCore, 'geo' | 'demographics' | 'firmographics'>> & {
  geo?: Partial<SemanticCore['geo']>;
  demographics?: Partial<SemanticCore['demographics']>;
  firmographics?: Partial<SemanticCore['firmographics']>;
};

function fixed(partial: CoreOverrides): PersonaExtractor {
  const semanticCore: SemanticCore = {
    intentTopics: [],
    interests: [],
    exclusions: [],
    ...partial,
    geo: { countries: ['GB'], cities: [], postcodeDistricts: [], tvRegions: [], ...partial.geo },
    demographics: { gender: 'any', incomeBand: 'any', ...partial.demographics },
    firmographics: { sicCodes: [], seniority: [], companySize: 'any', ...partial.firmographics },
  };
  const persona: ExtractedPersona = { name: 'n', nlDescription: 'd', semanticCore, confidence: {} };
  return { method: 'fixed', engineVersion: '0', extract: () => persona };
}

const one = (expect: LabelledCase['expect']): LabelledCase[] => [{ id: 'c1', brief: 'b', expect }];

describe('evaluate', () => {
  it('set fields are right only on set equality, and precision/recall count items', () => {
    const r = evaluate(fixed({ geo: { cities: ['Leeds', 'York'] } }), one({ cities: ['Leeds', 'Hull'] }));
    expect(r.fields.cities).toEqual({ labelled: 1, right: 0, accuracy: 0, precision: 0.5, recall: 0.5 });
    expect(r.allRightShare).toBe(0);
  });

  it('a set labelled [] is right only when the field is empty or absent', () => {
    expect(evaluate(fixed({ geo: { cities: [] } }), one({ cities: [] })).allRight).toBe(1);
    expect(evaluate(fixed({ geo: { cities: ['Leeds'] } }), one({ cities: [] })).allRight).toBe(0);
    const absent = fixed({});
    const core = absent.extract('b').semanticCore;
    delete (core.firmographics as Partial<SemanticCore['firmographics']>).seniority;
    expect(evaluate(absent, one({ seniority: [] })).allRight).toBe(1);
  });

  it('countries treat "UK" as GB and ignore order', () => {
    expect(evaluate(fixed({ geo: { countries: ['IE', 'UK'] } }), one({ countries: ['GB', 'IE'] })).allRight).toBe(1);
  });

  it('a null age means the age must be absent', () => {
    expect(evaluate(fixed({ demographics: { ageMin: 55 } }), one({ ageMin: 55, ageMax: null })).allRight).toBe(1);
    expect(evaluate(fixed({ demographics: { ageMin: 55, ageMax: 64 } }), one({ ageMax: null })).allRight).toBe(0);
  });

  it('scalar precision counts only briefs where the extractor set a non-default value', () => {
    const r = evaluate(fixed({}), one({ gender: 'any' }));
    expect(r.fields.gender).toEqual({ labelled: 1, right: 1, accuracy: 1, precision: null, recall: 1 });
  });

  it('sicDivisions needs at least one code and every code in an allowed division', () => {
    expect(evaluate(fixed({ firmographics: { sicCodes: ['64191', '65120'] } }), one({ sicDivisions: ['64', '65'] })).allRight).toBe(1);
    expect(evaluate(fixed({ firmographics: { sicCodes: ['64191', '66220'] } }), one({ sicDivisions: ['64', '65'] })).allRight).toBe(0);
    expect(evaluate(fixed({}), one({ sicDivisions: ['64'] })).allRight).toBe(0);
  });

  it('include fields need each word inside some entry, case-insensitively, across interests and intent', () => {
    const ex = fixed({ interests: ['Live Football'], intentTopics: ['electric cars'] });
    expect(evaluate(ex, one({ interestsInclude: ['football', 'electric'] })).allRight).toBe(1);
    expect(evaluate(ex, one({ interestsInclude: ['rugby'] })).fields.interestsInclude?.recall).toBe(0);
  });

  it('negative keywords compare in lower case; hasUnresolved compares presence', () => {
    const ex = fixed({ searchNegativeKeywords: ['Free', 'jobs'], unresolvedConstraints: ['x'] });
    const r = evaluate(ex, one({ negativeKeywords: ['free', 'jobs'], hasUnresolved: true }));
    expect(r.allRight).toBe(1);
    expect(r.fields.hasUnresolved).toMatchObject({ precision: 1, recall: 1 });
  });

  it('an empty sicDivisions label means the brief names no industry: any code is a miss', () => {
    expect(evaluate(fixed({}), one({ sicDivisions: [] })).allRight).toBe(1);
    expect(evaluate(fixed({ firmographics: { sicCodes: ['92000'] } }), one({ sicDivisions: [] })).allRight).toBe(0);
  });

  it('notTargeted fails when a word reaches any positive field, and not when it is only excluded', () => {
    const excludedOnly = fixed({ exclusions: ['gambling'], interests: ['running'] });
    expect(evaluate(excludedOnly, one({ notTargeted: ['gambling'] })).allRight).toBe(1);
    for (const inverted of [
      fixed({ interests: ['Gambling'] }),
      fixed({ intentTopics: ['online gambling'] }),
      fixed({ firmographics: { industries: ['gambling and betting'] } }),
      fixed({ geo: { cities: ['London'] } }),
      fixed({ geo: { regions: ['Scotland'] } }),
      fixed({ geo: { tvRegions: ['Northern Ireland'] } }),
    ]) {
      expect(evaluate(inverted, one({ notTargeted: ['gambling', 'london', 'scotland', 'northern ireland'] })).allRight).toBe(0);
    }
  });

  it('unresolvedInclude needs each word in some constraint; notUnresolved needs it in none', () => {
    const ex = fixed({ unresolvedConstraints: ['"after 9pm": dayparting has no persona field'] });
    expect(evaluate(ex, one({ unresolvedInclude: ['9pm'], notUnresolved: ['tone'] })).allRight).toBe(1);
    expect(evaluate(ex, one({ unresolvedInclude: ['weekends'] })).allRight).toBe(0);
    expect(evaluate(ex, one({ notUnresolved: ['dayparting'] })).allRight).toBe(0);
  });

  it('only labelled keys are judged and every miss is listed', () => {
    const r = evaluate(fixed({ geo: { cities: ['Leeds'] } }), one({ gender: 'female' }));
    expect(Object.keys(r.fields)).toEqual(['gender']);
    expect(r.misses).toEqual([{ id: 'c1', key: 'gender', expected: 'female', got: 'any' }]);
  });

  it('formatTable prints one fixed-width row per labelled key and the all-fields-right share', () => {
    const table = formatTable(evaluate(fixed({ demographics: { gender: 'female' } }), one({ gender: 'female', countries: ['GB'] })), 'set');
    const lines = table.split('\n');
    expect(lines[0]).toBe('set (1 briefs)');
    expect(lines.some((l) => /^gender\s+1\s+1\s+1\.00\s+1\.00\s+1\.00$/.test(l))).toBe(true);
    expect(lines[lines.length - 1]).toMatch(/^all fields right\s+1\s+1\s+1\.00$/);
    expect(
      new Set(
        lines
          .slice(1)
          .filter((l) => !l.startsWith('-') && l.trim())
          .map((l) => l.length <= 52),
      ).size,
    ).toBe(1);
  });
});
