import { extractPersona } from '../../shared/personas/extractor';
import { GENERATIONS } from '../../shared/personas/lexicon/people';
import { core, unresolved } from './helpers';

const ages = (brief: string): [number | undefined, number | undefined] => {
  const d = core(brief).demographics;
  return [d.ageMin, d.ageMax];
};

describe('ages', () => {
  it.each([
    ['Women aged 25-34 in Leeds.', 25, 34],
    ['Dads 30 to 45 in Glasgow.', 30, 45],
    ['Adults aged 25\u201334.', 25, 34],
    ['People between 35 and 54.', 35, 54],
    ['18-24 year olds in Edinburgh.', 18, 24],
    ['25-34s in Cardiff.', 25, 34],
    ['Women in their 30s.', 30, 39],
    ['People in their late 20s and early 30s.', 27, 33],
    ['Twenty-somethings in Bristol.', 20, 29],
    ['Under 30s and over 18s in Leeds.', 18, 29],
  ])('"%s" gives ageMin %s and ageMax %s', (brief, min, max) => {
    expect(ages(brief)).toEqual([min, max]);
  });

  it('when the brief says "over 55s", ageMin is 55 and ageMax is absent', () => {
    expect(ages('Over 55s across the UK.')).toEqual([55, undefined]);
    expect(ages('Homeowners over 55.')).toEqual([55, undefined]);
    expect(ages('Golf fans aged 50+.')).toEqual([50, undefined]);
    expect(ages('People aged 65 or older.')).toEqual([65, undefined]);
  });

  it('when the brief says "under 30", ageMax is 29 and ageMin is absent', () => {
    expect(ages('Young professionals under 30.')).toEqual([undefined, 29]);
    expect(ages('Under-25s who game.')).toEqual([undefined, 24]);
  });

  it('"up to 35" keeps 35 as the maximum', () => {
    expect(ages('Up to 35s in Bristol.')).toEqual([undefined, 35]);
  });

  it('an excluded age band narrows the range: "18+ but not under-25s" is 25 and over', () => {
    expect(ages('Anyone 18+ interested in whisky, but exclude under-25s.')).toEqual([25, undefined]);
    expect(ages('Car buyers aged 30-49, but not under-35s.')).toEqual([35, 49]);
    expect(ages('Gamers aged 16 to 24, excluding under-18s.')).toEqual([18, 24]);
  });

  it('"teens" is 16 to 19: nothing below 16 can be bought', () => {
    expect(ages('Teens in Brighton who love K-pop.')).toEqual([16, 19]);
    expect(unresolved('Teens in Brighton who love K-pop.')).toEqual([]);
  });

  it('"students" alone is not an age', () => {
    expect(ages('Students in Oxford.')).toEqual([undefined, undefined]);
  });

  it.each(GENERATIONS.map((g) => [g.label, g.ageMin, g.ageMax]))(
    'the generation "%s" maps to the documented range %s-%s',
    (label, min, max) => {
      expect(ages(`${label} in Leeds.`)).toEqual([min, max]);
    },
  );

  it('generations are computed from birth years at 2026 (Gen Z 16-29, millennials 30-45, Gen X 46-61, boomers 62-80)', () => {
    expect(ages('Gen Z gamers.')).toEqual([16, 29]);
    expect(ages('Millennial renters.')).toEqual([30, 45]);
    expect(ages('Gen X couples.')).toEqual([46, 61]);
    expect(ages('Baby boomers.')).toEqual([62, 80]);
  });

  it('numbers the brief writes beat a generation label ("millennial women aged 28-35")', () => {
    expect(ages('Millennial women aged 28-35.')).toEqual([28, 35]);
  });

  it('numbers that are not ages are not read as ages', () => {
    expect(ages('IT directors at FTSE 250 companies with 500+ employees.')).toEqual([undefined, undefined]);
    expect(ages('People who spent over \u00a3500 at a store in the last 30 days.')).toEqual([undefined, undefined]);
    expect(ages('Parents with children aged 5 to 11.')).toEqual([undefined, undefined]);
  });

  it('ages of 13-17 are raised to 16 and the brief is told why', () => {
    expect(ages('People aged 13-17 in London.')).toEqual([16, 17]);
    expect(unresolved('People aged 13-17 in London.').join(' ')).toMatch(/below 16/);
  });

  it('an audience entirely under 16 is reported and no age is set', () => {
    expect(ages('Kids aged 8 to 12 who play Minecraft.')).toEqual([undefined, undefined]);
    expect(unresolved('Kids aged 8 to 12 who play Minecraft.')).not.toEqual([]);
  });

  it('ages carry a confidence when set, and none when absent', () => {
    expect(extractPersona('Women aged 25-34.').confidence['demographics.ageMin']).toBeGreaterThan(0.9);
    expect(extractPersona('Women in Leeds.').confidence['demographics.ageMin']).toBeUndefined();
  });
});

describe('gender', () => {
  it.each([
    ['Women in Leeds.', 'female'],
    ['Mums in Cardiff.', 'female'],
    ['Female founders.', 'female'],
    ['Men 45-64 in Belfast.', 'male'],
    ['Dads who watch football.', 'male'],
    ['Male gamers.', 'male'],
    ['New parents in Leeds.', 'any'],
    ['Mums and dads in Stoke.', 'any'],
    ['New parents, women and men alike.', 'any'],
  ])('"%s" gives gender %s', (brief, gender) => {
    expect(core(brief).demographics.gender).toBe(gender);
  });

  it('a gendered word that names someone else does not set gender ("parents of girls", "women\'s football")', () => {
    expect(core('Parents of girls in Leeds.').demographics.gender).toBe('any');
    expect(core("Fans of women's football.").demographics.gender).toBe('any');
    expect(core('Women shopping for gifts for men.').demographics.gender).toBe('female');
  });

  it('excluding one sex targets the other ("adults, excluding men")', () => {
    expect(core('Adults in Leeds, excluding men.').demographics.gender).toBe('female');
  });
});

describe('income band', () => {
  it.each([
    ['Affluent homeowners.', 'high'],
    ['High earners aged 35-54.', 'high'],
    ['Wealthy retirees.', 'high'],
    ['HNW individuals in Geneva.', 'high'],
    ['High net worth investors.', 'high'],
    ['Households, middle income.', 'mid'],
    ['Mid income families.', 'mid'],
    ['Households earning over \u00a3100k.', 'high'],
    ['Households with a combined income between \u00a340k and \u00a355k.', 'mid'],
    ['Golf fans in Leeds.', 'any'],
  ])('"%s" gives income band %s', (brief, band) => {
    expect(core(brief).demographics.incomeBand).toBe(band);
  });

  it('low income has no band: it is reported and the band stays "any"', () => {
    expect(core('Low-income families in Hull.').demographics.incomeBand).toBe('any');
    expect(unresolved('Low-income families in Hull.').join(' ')).toMatch(/Low-income/);
  });
});
