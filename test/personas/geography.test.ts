import { extractPersona } from '../../shared/personas/extractor';
import { core } from './helpers';

describe('countries', () => {
  it('when the brief names no place, countries stay at the default ["GB"] and carry no confidence', () => {
    const p = extractPersona('Golf fans who love travel.');
    expect(p.semanticCore.geo.countries).toEqual(['GB']);
    expect(p.confidence['geo.countries']).toBeUndefined();
  });

  it.each([
    ['across the UK', ['GB']],
    ['in Britain', ['GB']],
    ['in England', ['GB']],
    ['in Germany and France', ['DE', 'FR']],
    ['in Ireland and the UK', ['IE', 'GB']],
    ['in the United States and Canada', ['US', 'CA']],
    ['in the DACH region', ['DE', 'AT', 'CH']],
    ['in Poland and the Czech Republic', ['PL', 'CZ']],
  ])('when the brief says "%s", countries are %j', (where, codes) => {
    expect(core(`Gamers ${where}.`).geo.countries.sort()).toEqual([...codes].sort());
  });

  it('naming only UK places keeps countries ["GB"]', () => {
    expect(core('Runners in Leeds and the Midlands TV region.').geo.countries).toEqual(['GB']);
  });

  it('a foreign city implies its country', () => {
    const geo = core('Foodies in Paris, Milan and Seattle.').geo;
    expect(geo.countries.sort()).toEqual(['FR', 'IT', 'US']);
    expect(geo.cities).toEqual(['Paris', 'Milan', 'Seattle']);
  });

  it('a lower-case "us" is a pronoun, not the United States', () => {
    expect(core('People who bought from us recently.').geo.countries).toEqual(['GB']);
  });

  it('a destination inside an interest is not a target country ("a holiday to Spain")', () => {
    expect(core('Parents in Leicester planning a summer holiday to Spain.').geo.countries).toEqual(['GB']);
  });

  it('a demonym before a people noun names the country only when no place is named', () => {
    expect(core('German shoppers researching e-bikes.').geo.countries).toEqual(['DE']);
    expect(core('Polish shoppers in the UK.').geo.countries).toEqual(['GB']);
    expect(core('German cars fans in Birmingham.').geo.countries).toEqual(['GB']);
  });

  it('an area too broad to list ("across Europe") is reported and countries stay at the default', () => {
    const c = core('Retail investors across Europe.');
    expect(c.geo.countries).toEqual(['GB']);
    expect(c.unresolvedConstraints?.join(' ')).toMatch(/Europe/);
  });

  it('an ambiguous country name needs a place cue ("Turkey farmers" is not Türkiye)', () => {
    expect(core('Turkey farmers in Norfolk.').geo.countries).toEqual(['GB']);
    expect(core('Customers in Turkey.').geo.countries).toEqual(['TR']);
  });
});

describe('cities', () => {
  it('a UK city goes to cities, not to TV regions', () => {
    const geo = core('Commuters in London and Birmingham.').geo;
    expect(geo.cities).toEqual(['London', 'Birmingham']);
    expect(geo.tvRegions).toEqual([]);
  });

  it('aliases resolve to the English name ("Newcastle" is Newcastle upon Tyne, "München" is Munich)', () => {
    expect(core('Students in Newcastle.').geo.cities).toEqual(['Newcastle upon Tyne']);
    expect(core('Brewers in München.').geo.cities).toEqual(['Munich']);
  });

  it('a city name that is also a word only counts with a place cue', () => {
    expect(core('Reading enthusiasts who love crime novels.').geo.cities).toEqual([]);
    expect(core('Young mums in Reading and Slough.').geo.cities).toEqual(['Reading', 'Slough']);
    expect(core('Retirees in Bristol, Bath and Wells.').geo.cities).toEqual(['Bristol', 'Bath', 'Wells']);
  });

  it('a football club is not a city ("fans of Manchester United")', () => {
    expect(core('Fans of Manchester United in Dublin.').geo.cities).toEqual(['Dublin']);
  });

  it('a compass word stays with its city ("South East London" is London, not a TV region)', () => {
    const geo = core('Renters in South East London.').geo;
    expect(geo.cities).toEqual(['London']);
    expect(geo.tvRegions).toEqual([]);
  });

  it('a name shared by two countries follows the country the brief names', () => {
    expect(core('Home buyers in Perth, Western Australia.').geo.countries).toEqual(['AU']);
  });
});

describe('postcode districts', () => {
  it('reads districts such as EC1, EC2A and N1', () => {
    expect(core('Small business owners in London postcode districts EC1, EC2A and N1.').geo.postcodeDistricts).toEqual([
      'EC1',
      'EC2A',
      'N1',
    ]);
  });

  it('expands a range "LS1 to LS6" and "BS1-3" into every district', () => {
    expect(core('Plumbers in Leeds LS1 to LS6.').geo.postcodeDistricts).toEqual(['LS1', 'LS2', 'LS3', 'LS4', 'LS5', 'LS6']);
    expect(core('Households in postcode districts BS1-3.').geo.postcodeDistricts).toEqual(['BS1', 'BS2', 'BS3']);
  });

  it('takes the district from a full postcode', () => {
    expect(core('People near SW1A 1AA.').geo.postcodeDistricts).toEqual(['SW1A']);
  });

  it('rejects shapes that are not real districts: unknown areas, B2B, CO2, motorways', () => {
    expect(core('B2B buyers who care about CO2 emissions.').geo.postcodeDistricts).toEqual([]);
    expect(core('Commuters on the M25 corridor.').geo.postcodeDistricts).toEqual([]);
    expect(core('Households in postcode districts QQ1 and XY2.').geo.postcodeDistricts).toEqual([]);
    expect(core('Shoppers in postcode district B2B.').geo.postcodeDistricts).toEqual([]);
  });

  it('postcode districts imply the UK', () => {
    expect(core('Households in M25 and M26.').geo.countries).toEqual(['GB']);
  });
});

describe('TV regions', () => {
  it.each([
    ['Granada', 'North West'],
    ['Central', 'Midlands'],
    ['Tyne Tees', 'North East'],
    ['Anglia', 'East of England'],
    ['Meridian', 'South and South East'],
    ['West Country', 'South West'],
    ['HTV', 'West'],
    ['ITV Wales', 'Wales'],
    ['STV Central', 'Central Scotland'],
    ['STV North', 'North Scotland'],
    ['Grampian', 'North Scotland'],
    ['UTV', 'Northern Ireland'],
    ['Channel', 'Channel Islands'],
    ['Border', 'Border'],
  ])('the franchise "%s" maps to the %s TV region', (franchise, region) => {
    expect(core(`Viewers in the ${franchise} TV region.`).geo.tvRegions).toEqual([region]);
  });

  it('region names go to tvRegions ("the South West and Wales")', () => {
    expect(core('Wealthy retirees in the South West and Wales.').geo.tvRegions).toEqual(['South West', 'Wales']);
  });

  it('London is a TV region only when the brief says "TV region"', () => {
    const tv = core('Over 55s in the London TV region.').geo;
    expect(tv.tvRegions).toEqual(['London']);
    expect(tv.cities).toEqual([]);
    expect(core('Over 55s in London.').geo.tvRegions).toEqual([]);
  });

  it('words that are also franchise names do not count outside a TV phrase ("central London", "cross-border")', () => {
    expect(core('Workers in central London doing cross-border trade.').geo.tvRegions).toEqual([]);
  });

  it('a county is kept in geo.regions and is neither a city nor a TV region', () => {
    const geo = core('Baby boomers in Kent and Sussex.').geo;
    expect(geo.cities).toEqual([]);
    expect(geo.tvRegions).toEqual([]);
    expect(geo.regions).toEqual(['Kent', 'Sussex']);
  });
});
