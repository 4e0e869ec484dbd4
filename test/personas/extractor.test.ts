import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LabelledCase, evaluate } from './evaluate';
import { createRuleExtractor, extractPersona, personaName } from '../../shared/personas/extractor';
import { ExtractedPersonaSchema, PersonaSchema, SemanticCoreSchema } from '../../shared/personas/persona-schema';
import { core, unresolved } from './helpers';

const DEV_SET = path.resolve(__dirname, 'dev-set.json');
const HOLDOUT_SET = path.resolve(__dirname, 'holdout-set.json');
const load = (file: string): LabelledCase[] => JSON.parse(readFileSync(file, 'utf8')) as LabelledCase[];

describe('the extractor API', () => {
  it('createRuleExtractor names its method and engine version and extracts like extractPersona', () => {
    const extractor = createRuleExtractor();
    expect(extractor.method).toBe('rules');
    expect(extractor.engineVersion).toMatch(/\d+\.\d+\.\d+/);
    expect(extractor.extract('Women in Leeds.')).toEqual(extractPersona('Women in Leeds.'));
  });

  it('nlDescription is the brief, trimmed', () => {
    expect(extractPersona('  Women in Leeds.  \n').nlDescription).toBe('Women in Leeds.');
  });

  it('name is the first sentence of the brief, at most 80 characters', () => {
    expect(extractPersona('Women in Leeds. Negative keywords: free.').name).toBe('Women in Leeds');
    const long = personaName('Chief information security officers at banks in France and Belgium, excluding our existing clients.');
    expect(long.length).toBeLessThanOrEqual(80);
    expect(long.endsWith('\u2026')).toBe(true);
    expect(personaName('   ')).toBe('Untitled persona');
  });

  it('is deterministic: the same brief gives the same persona', () => {
    const brief = 'CFOs and finance directors at mid-market manufacturing companies in the Midlands TV region.';
    expect(extractPersona(brief)).toEqual(extractPersona(brief));
  });
});

describe('a brief that states nothing of a field', () => {
  it('keeps every default and invents nothing', () => {
    const c = core('A brief for everyone: no particular audience, just broad reach.');
    expect(c.geo).toEqual({ countries: ['GB'], cities: [], postcodeDistricts: [], tvRegions: [] });
    expect(c.demographics).toEqual({ gender: 'any', incomeBand: 'any' });
    expect(c.firmographics).toEqual({ sicCodes: [], seniority: [], companySize: 'any' });
    expect([c.interests, c.intentTopics, c.exclusions]).toEqual([[], [], []]);
    expect(c.searchNegativeKeywords).toBeUndefined();
    expect(c.unresolvedConstraints).toBeUndefined();
  });

  it('an empty brief gives the defaults and an empty confidence map', () => {
    const p = extractPersona('');
    expect(p.confidence).toEqual({});
    expect(p.semanticCore.geo.countries).toEqual(['GB']);
  });

  it('a consumer brief has no firmographics and a B2B brief no demographics', () => {
    expect(core('Women aged 25-34 in Leeds who love yoga.').firmographics).toEqual({ sicCodes: [], seniority: [], companySize: 'any' });
    expect(core('IT directors at FTSE 250 companies.').demographics).toEqual({ gender: 'any', incomeBand: 'any' });
  });

  it('confidence has one entry per filled field, each between 0 and 1', () => {
    const p = extractPersona('Women aged 25-34 in Manchester who are into yoga, excluding students.');
    expect(Object.keys(p.confidence).sort()).toEqual(
      [
        'demographics.ageMax',
        'demographics.ageMin',
        'demographics.gender',
        'exclusions',
        'geo.cities',
        'geo.countries',
        'interests',
      ].sort(),
    );
    for (const v of Object.values(p.confidence)) {
      expect(v).toBeGreaterThan(0);
      expect(v).toBeLessThanOrEqual(1);
    }
  });
});

describe('contradictions are reported, never guessed', () => {
  it('"women ... men only": gender stays "any" and the clash is reported', () => {
    const c = core('Women aged 25-40 interested in skincare, men only.');
    expect(c.demographics.gender).toBe('any');
    expect(c.unresolvedConstraints?.join(' ')).toMatch(/gender/);
  });

  it('a backwards range ("aged 40-30") leaves both ages absent and is reported', () => {
    const c = core('Anyone aged 40-30 in Leeds who likes gardening.');
    expect([c.demographics.ageMin, c.demographics.ageMax]).toEqual([undefined, undefined]);
    expect(c.unresolvedConstraints?.join(' ')).toMatch(/40-30/);
  });

  it('two incompatible age ranges leave both ages absent and are reported', () => {
    for (const brief of ['Under 30s in Leeds, but also over 60s.', 'Women 25-34 and men 45-54 in Leeds.', 'Gen Z aged 50-60.']) {
      const c = core(brief);
      expect([c.demographics.ageMin, c.demographics.ageMax]).toEqual([undefined, undefined]);
      expect(c.unresolvedConstraints?.length).toBeGreaterThan(0);
    }
  });

  it('an excluded band inside the range would leave a gap: reported, ages left unset', () => {
    expect(core('Aged 18 to 65, but not 30 to 40.').demographics.ageMin).toBeUndefined();
    expect(unresolved('Aged 18 to 65, but not 30 to 40.')).toHaveLength(1);
  });

  it('two income bands leave the band at "any" and are reported', () => {
    const c = core('Middle-income and affluent professionals in Bath.');
    expect(c.demographics.incomeBand).toBe('any');
    expect(c.unresolvedConstraints?.length).toBeGreaterThan(0);
  });

  it('the untouched fields of a contradictory brief are still extracted', () => {
    const c = core('Anyone aged 40-30 in Leeds who likes gardening.');
    expect(c.geo.cities).toEqual(['Leeds']);
    expect(c.interests).toEqual(['gardening']);
  });
});

describe('asks no field holds', () => {
  it('an ask after "we want" is reported: the advertiser named as subject is no field', () => {
    expect(unresolved('We want people currently on NHS waiting lists for hip or knee ops, 55+, Midlands.').join(' ')).toMatch(
      /waiting lists/,
    );
    expect(unresolved('We want runners in Leeds.')).toEqual([]);
  });
});

describe('schema', () => {
  it('every dev-set and holdout-set persona is schema-valid', () => {
    for (const c of [...load(DEV_SET), ...load(HOLDOUT_SET)]) {
      const p = extractPersona(c.brief);
      expect(ExtractedPersonaSchema.safeParse(p).success).toBe(true);
      expect(PersonaSchema.safeParse({ ...p, id: c.id }).success).toBe(true);
    }
  });

  it('for any string the extractor never throws and returns a schema-valid persona', () => {
    const words = [
      'women',
      'aged',
      '25-34',
      'over',
      '55',
      'under-25s',
      'in',
      'London',
      'TV region',
      'Granada',
      'LS1',
      'to',
      'EC2A',
      'excluding',
      'not',
      'negative keywords:',
      'CFOs',
      'at',
      'SMEs',
      'banks',
      'who',
      'love',
      'our',
      'CRM',
      'lookalike',
      'Gen Z',
      'affluent',
      '\u00a3',
      '250+',
      'employees',
      ',',
      '.',
      ';',
      'men only',
      '40-30',
    ];
    const brief = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'grapheme', maxLength: 200 }),
      fc.array(fc.constantFrom(...words), { maxLength: 40 }).map((w) => w.join(' ')),
    );
    fc.assert(
      fc.property(brief, (s) => {
        const p = extractPersona(s);
        return (
          ExtractedPersonaSchema.safeParse(p).success &&
          p.name.length <= 80 &&
          (p.semanticCore.demographics.ageMin ?? 16) <= (p.semanticCore.demographics.ageMax ?? 99)
        );
      }),
      { numRuns: 2000, seed: 20261122 },
    );
  });

  it('applies the spec defaults to a minimal semantic core and keeps unknown fields', () => {
    const parsed = SemanticCoreSchema.parse({ geo: { regions: ['Kent'] }, custom: true });
    expect(parsed.geo).toEqual({ countries: ['GB'], cities: [], postcodeDistricts: [], tvRegions: [], regions: ['Kent'] });
    expect(parsed.demographics).toEqual({ gender: 'any', incomeBand: 'any' });
    expect(parsed.firmographics).toEqual({ sicCodes: [], seniority: [], companySize: 'any' });
    expect(parsed).toMatchObject({ intentTopics: [], interests: [], exclusions: [], custom: true });
  });

  it('rejects values outside the spec bounds', () => {
    const base = { id: 'p1', name: 'n', nlDescription: 'd', semanticCore: { geo: {} } };
    expect(PersonaSchema.parse(base).version).toBe(1);
    expect(PersonaSchema.safeParse({ ...base, version: 0 }).success).toBe(false);
    expect(PersonaSchema.safeParse({ ...base, semanticCore: { geo: {}, demographics: { ageMin: 15 } } }).success).toBe(false);
    expect(PersonaSchema.safeParse({ ...base, semanticCore: { geo: {}, demographics: { ageMax: 100 } } }).success).toBe(false);
    expect(PersonaSchema.safeParse({ ...base, semanticCore: { geo: {}, firmographics: { seniority: ['intern'] } } }).success).toBe(false);
    expect(PersonaSchema.safeParse({ ...base, semanticCore: { geo: {}, searchNegativeKeywords: [''] } }).success).toBe(false);
    expect(PersonaSchema.safeParse({ ...base, confidence: { 'geo.cities': 1.5 } }).success).toBe(false);
    expect(PersonaSchema.safeParse({ ...base, createdAt: 'yesterday' }).success).toBe(false);
  });
});

describe('labelled sets', () => {
  it('gets every labelled field right on at least 90% of the holdout set', () => {
    expect(evaluate(createRuleExtractor(), load(HOLDOUT_SET)).allRightShare).toBeGreaterThanOrEqual(0.9);
  });

  it('gets every labelled field right on at least 90% of the dev set', () => {
    expect(evaluate(createRuleExtractor(), load(DEV_SET)).allRightShare).toBeGreaterThanOrEqual(0.9);
  });

  it('the holdout set has at least 40 briefs with ids ho-01 onwards', () => {
    const cases = load(HOLDOUT_SET);
    expect(cases.length).toBeGreaterThanOrEqual(40);
    cases.forEach((c, i) => expect(c.id).toBe(`ho-${String(i + 1).padStart(2, '0')}`));
  });
});
