import { gerund } from '../../shared/personas/topics';
import { core, unresolved } from './helpers';

const topics = (brief: string): string[] => {
  const c = core(brief);
  return [...c.interests, ...c.intentTopics].map((t) => t.toLowerCase());
};

describe('interests', () => {
  it.each([
    ['Women who are into yoga and wellness.', ['yoga', 'wellness']],
    ['Homeowners interested in cruises and luxury travel.', ['cruises', 'luxury travel']],
    ['Men who follow rugby and golf.', ['rugby', 'golf']],
    ['Dads who watch live football.', ['live football']],
    ['Teens who love K-pop.', ['k-pop']],
    ['Fans of horror films.', ['horror films']],
    ['Adults with an interest in caravanning.', ['caravanning']],
    ['Runners training for a marathon.', ['marathon']],
    ['Pet owners with dogs.', ['dogs']],
    ['Golf fans in Leeds.', ['golf fans']],
    // An activity verb names its activity.
    ['Guys 25-44 who fish and hunt.', ['fishing', 'hunting']],
    ['Climbers who boulder.', ['bouldering']],
  ])('"%s" gives interests %j', (brief, expected) => {
    const c = core(brief);
    for (const e of expected) expect(c.interests.map((i) => i.toLowerCase())).toContain(e);
  });

  it('"who <verb> on ..." keeps the verb so the interest still reads ("game on PC", "stream on Twitch")', () => {
    expect(topics('Students who game on PC.')).toContain('game on pc');
    expect(topics('Gamers who stream on Twitch.')).toContain('stream on twitch');
  });

  it('"who shop at X" keeps what they shop at', () => {
    expect(topics('Mums who shop at discount supermarkets.')).toContain('discount supermarkets');
  });

  it('an audience noun the brief opens with is kept ("Runners", "New parents", "Commuters")', () => {
    expect(topics('Runners aged 20-35 in Edinburgh.')).toContain('runners');
    expect(topics('New parents in the Anglia TV region.')).toContain('new parents');
    expect(topics('Commuters in Birmingham.')).toContain('commuters');
  });

  it('an interest stops where the place begins ("who watch live football in Glasgow")', () => {
    expect(topics('Dads who watch live football in Glasgow.')).toEqual(['live football', 'football (soccer)']);
  });

  it('a brief that is an instruction, not an audience, invents no interest', () => {
    for (const brief of ['Brand awareness campaign.', 'Promote our new app.', 'We sell garden furniture.', 'Please target everyone.']) {
      expect(topics(brief)).toEqual([]);
    }
  });
});

it.each([
  ['hike', 'hiking'],
  ['swim', 'swimming'],
  ['run', 'running'],
  ['ski', 'skiing'],
  ['cycle', 'cycling'],
  ['garden', 'gardening'],
  ['sew', 'sewing'],
  ['fish', 'fishing'],
  ['canoe', 'canoeing'],
])('the activity "%s" is "%s"', (verb, activity) => {
  expect(gerund(verb)).toBe(activity);
});

describe('intent topics', () => {
  it.each([
    ['Small business owners looking for accounting software.', 'accounting software'],
    ['High earners researching electric cars.', 'electric cars'],
    ['Pet owners shopping for pet insurance.', 'pet insurance'],
    ['Dads who are in-market for a family SUV.', 'family suv'],
    ['Renters planning to buy their first home.', 'first home'],
    ['Founders raising a seed round.', 'seed round'],
    ['IT directors evaluating cloud security vendors.', 'cloud security vendors'],
    ['Search campaign for emergency plumbers in Leeds.', 'emergency plumbers'],
    ['Restaurant owners looking for booking software.', 'booking software'],
  ])('"%s" gives the intent topic "%s"', (brief, topic) => {
    expect(core(brief).intentTopics.map((t) => t.toLowerCase())).toContain(topic);
  });

  it('intent phrases are not interests', () => {
    const c = core('Renters researching mortgages.');
    expect(c.intentTopics).toEqual(['mortgages']);
    expect(c.interests).toEqual(['renters']);
  });
});

describe('exclusions', () => {
  it.each([
    ['CFOs at manufacturers, excluding existing customers.', 'existing customers'],
    ['Engineering managers, not recruiters.', 'recruiters'],
    ['Adults in Leeds except students.', 'students'],
    ['Pet owners, excluding cat food buyers.', 'cat food buyers'],
    ['Women in Leeds but not teachers.', 'teachers'],
  ])('"%s" excludes "%s"', (brief, item) => {
    expect(core(brief).exclusions).toContain(item);
  });

  it('an excluded place is an exclusion, not a target ("except those in Birmingham")', () => {
    const c = core('Adults in the West Midlands, except those in Birmingham.');
    expect(c.geo.cities).toEqual([]);
    expect(c.exclusions.join(' ')).toMatch(/Birmingham/);
  });

  it('an excluded age band narrows the ages instead of becoming a text exclusion', () => {
    const c = core('Anyone 18+, but exclude under-25s and people who already bought from us.');
    expect(c.demographics.ageMin).toBe(25);
    expect(c.exclusions).toEqual(['people who already bought from us']);
  });
});

describe('search negative keywords', () => {
  it('reads "negative keywords: a, b" in lower case', () => {
    expect(core('Search for plumbers; negative keywords: Course, apprenticeship, salary.').searchNegativeKeywords).toEqual([
      'course',
      'apprenticeship',
      'salary',
    ]);
  });

  it('strips quotes around each keyword', () => {
    expect(core('Flights to Spain; negative keywords: "free", "jobs", \'careers\'.').searchNegativeKeywords).toEqual([
      'free',
      'jobs',
      'careers',
    ]);
  });

  it('is absent when the brief names none', () => {
    expect(core('Women in Leeds.').searchNegativeKeywords).toBeUndefined();
  });
});

describe('unresolved constraints', () => {
  it.each([
    ["People who have visited a competitor's store in the last 30 days in Bristol."],
    ['Shoppers who visited our store last week.'],
    ['Homeowners with a credit score above 700.'],
    ['Lookalikes of our CRM.'],
    ['IT directors, with a lookalike of our top 1% lifetime value customers.'],
    ['Upsell to our existing customers in Leeds.'],
    ['People who abandoned a basket on our website in the last 7 days.'],
    ['Retarget everyone who watched 50% of our YouTube video.'],
    ['People within 5 miles of our Bristol store.'],
    ['People with type 2 diabetes in Bristol.'],
    ['Shoppers who spent over \u00a3500 at our stores last year.'],
  ])('"%s" is reported as unresolved', (brief) => {
    expect(unresolved(brief).length).toBeGreaterThan(0);
  });

  it('an unresolved ask does not swallow the targets around it', () => {
    const c = core('Lookalikes of our newsletter subscribers aged 25 to 44 in London.');
    expect(c.unresolvedConstraints).toHaveLength(1);
    expect(c.geo.cities).toEqual(['London']);
    expect([c.demographics.ageMin, c.demographics.ageMax]).toEqual([25, 44]);
  });

  it('a plain audience has no unresolved constraints', () => {
    expect(core('Women aged 25-34 in Manchester and Leeds who are into yoga and wellness.').unresolvedConstraints).toBeUndefined();
  });
});
