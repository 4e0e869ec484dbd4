import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LabelledCase, evaluate } from '../../shared/personas/evaluate';
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

describe('labelled sets written for generalisation', () => {
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
