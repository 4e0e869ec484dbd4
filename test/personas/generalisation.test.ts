import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LabelledCase, evaluate } from './evaluate';
import { createRuleExtractor, explainExtraction } from '../../shared/personas/extractor';
import { core, unresolved } from './helpers';

const load = (file: string): LabelledCase[] => JSON.parse(readFileSync(path.resolve(__dirname, file), 'utf8')) as LabelledCase[];
const DEV = [...load('dev-set.json'), ...load('dev-extra-set.json')];

describe('leftover accounting', () => {
  it('every clause of every development brief is represented, prose, empty or reported with its words', () => {
    let clauses = 0;
    for (const c of DEV) {
      const { persona, clauses: account } = explainExtraction(c.brief);
      const reported = persona.semanticCore.unresolvedConstraints ?? [];
      for (const clause of account) {
        clauses++;
        expect(['represented', 'prose', 'empty', 'unresolved']).toContain(clause.status);
        if (clause.status === 'unresolved')
          expect(reported.some((r) => r.includes(clause.text.replace(/^(?:and|or|but)\s+/i, '')))).toBe(true);
      }
      // A brief labelled as fully representable leaves nothing over.
      if (c.expect.hasUnresolved === false) expect(account.filter((x) => x.status === 'unresolved')).toEqual([]);
    }
    expect(clauses).toBeGreaterThan(DEV.length);
  });

  it('an ask no field can hold is reported, not dropped', () => {
    expect(unresolved('Car owners in Leeds whose insurance renews in March.').join(' ')).toMatch(/insurance renews in March/);
    expect(unresolved('CTOs in Dublin who attended Web Summit.').join(' ')).toMatch(/Web Summit/);
  });

  it('a fully represented brief reports nothing', () => {
    expect(unresolved('Women aged 25-34 in Manchester who are into yoga.')).toEqual([]);
  });
});

describe('indirect interests land on the taxonomy', () => {
  it('an event, league or club implies its sport', () => {
    expect(core('Men in Cardiff who never miss a Six Nations match.').interests).toContain('Rugby');
    expect(core('Adults in Bristol who follow the Premier League.').interests).toContain('Football (Soccer)');
  });

  it('an activity verb without an object is an interest; with another object it is not', () => {
    expect(core('People who sail, aged 40 to 65.').interests).toContain('Sailing');
    expect(core('People who run small businesses in Leeds.').interests).not.toContain('Running and Jogging');
  });

  it('records the taxonomy node with its id', () => {
    expect(core('Golfers over 55 in Surrey.').interestTaxonomy).toEqual([{ key: 'golf', iabId: '644', name: 'Golf' }]);
  });
});

describe('ages, industries and search negatives in everyday words', () => {
  it('ages phrased as exclusions or in words', () => {
    expect(core('Parents of toddlers in Leeds, leave out anyone under 25.').demographics).toMatchObject({ ageMin: 25 });
    expect(core('Adults in Bristol, not older than 40.').demographics.ageMax).toBe(40);
    expect(core('Nobody under 21 or over 65: festival fans.').demographics).toMatchObject({ ageMin: 21, ageMax: 65 });
    expect(core('Students aged between eighteen and twenty-two.').demographics).toMatchObject({ ageMin: 18, ageMax: 22 });
  });

  it('industries described by activity map to SIC divisions', () => {
    expect(core('Managers at firms that build houses in Kent.').firmographics.sicCodes).toEqual(['41202']);
  });

  it('search negatives from "don\'t show ads for" and "avoid searches about"', () => {
    expect(core("Search ads for plumbers; don't show ads for jobs or courses.").searchNegativeKeywords).toEqual(['jobs', 'courses']);
    expect(core('Home insurance in the UK; avoid searches about claims.').searchNegativeKeywords).toEqual(['claims']);
  });
});

describe('everyday wording read by method, not by sentence', () => {
  it('a leftover about an offer, a product or a date is prose; a leftover about people is reported', () => {
    expect(unresolved('Vets in Kent. Half price on the first box, launches 2 May.')).toEqual([]);
    expect(unresolved('Adults in York who rent their flat from a housing association.').join(' ')).toMatch(/housing association/);
  });

  it('a search brief implies negatives: quoted terms and what the advertiser does not offer', () => {
    expect(
      core("Paid search for our bakery in Bath. We don't sell wedding cakes, so don't pay for those clicks.").searchNegativeKeywords,
    ).toEqual(['wedding cake']);
    expect(core("Search campaign, UK. Keep 'wholesale' out of search, we only sell to the public.").searchNegativeKeywords).toEqual([
      'wholesale',
    ]);
    // A bare "no X" about the plan is no negative; without search in the plan nothing is.
    expect(core('Search campaign for plumbers in Leeds, no budget cap on clicks.').searchNegativeKeywords).toBeUndefined();
    expect(core("Radio in Leeds for adults. We don't sell wedding cakes.").searchNegativeKeywords).toBeUndefined();
  });

  it('seniority and size said in everyday words', () => {
    const f = core('Family-run hotels in Devon; we want the owners themselves.').firmographics;
    expect(f).toMatchObject({ seniority: ['c-suite'], companySize: 'smb' });
    expect(core('Frontline staff at the big retailers in Wales.').firmographics).toMatchObject({
      seniority: ['ic'],
      companySize: 'enterprise',
    });
    expect(core('Mid-market agencies, roughly 40-300 staff, directors and partners.').firmographics).toMatchObject({
      seniority: ['c-suite', 'director'],
      companySize: 'mid',
    });
  });

  it('a brief typed in lower case, a misspelt city, an ISO code in a country list', () => {
    expect(core('need a quick persona. forty-somethings in bs1, bs2. radio only.')).toMatchObject({
      demographics: { ageMin: 40, ageMax: 49 },
      geo: { postcodeDistricts: ['BS1', 'BS2'] },
    });
    expect(core('Gardeners in Birmingam and Coventry.').geo.cities).toEqual(['Birmingham', 'Coventry']);
    expect(core('Cyclists in France + BE.').geo.countries).toEqual(['FR', 'BE']);
    expect(core('IT managers in the UK + the London TV region.').geo.countries).toEqual(['GB']);
  });

  it('an activity named in a who-clause adverbial is an interest', () => {
    expect(core('Adults in Leeds who potter about in the garden at weekends.').interests).toContain('Gardening');
  });
});

describe('labelled sets written for generalisation', () => {
  // Written blind, scored once at 0.42; seen since (docs/personas.md), so this guards against regressions only.
  it('gets every labelled field right on at least 90% of the fresh set', () => {
    expect(evaluate(createRuleExtractor(), load('fresh-set.json')).allRightShare).toBeGreaterThanOrEqual(0.9);
  });

  it('gets every labelled field right on at least 90% of the extra development set', () => {
    expect(evaluate(createRuleExtractor(), load('dev-extra-set.json')).allRightShare).toBeGreaterThanOrEqual(0.9);
  });

  it('gets every labelled field right on at least 90% of the unseen held-out set', () => {
    expect(evaluate(createRuleExtractor(), load('holdout-unseen-set.json')).allRightShare).toBeGreaterThanOrEqual(0.9);
  });

  it('gets every labelled field right on at least 90% of both sets of agency briefs', () => {
    for (const set of ['agency-set.json', 'agency-unseen-set.json'])
      expect(evaluate(createRuleExtractor(), load(set)).allRightShare).toBeGreaterThanOrEqual(0.9);
  });

  it('no word an agency brief rules out or mentions outside its audience reaches a targeting field', () => {
    for (const set of ['agency-set.json', 'agency-unseen-set.json']) {
      const result = evaluate(createRuleExtractor(), load(set));
      expect(result.misses.filter((m) => m.key === 'notTargeted' || m.key === 'sicDivisions')).toEqual([]);
    }
  });
});
