import { explainExtraction } from '../../shared/personas/extractor';
import { core, unresolved } from './helpers';

const roles = (brief: string): [string, string][] => {
  const { roles: clauses } = explainExtraction(brief);
  return clauses.map((c) => [brief.slice(c.start, c.end), c.role]);
};

describe('what each clause of a brief is about', () => {
  it('reads the client, the product, the creative and the plan apart from the audience', () => {
    expect(
      roles(
        "Client: Hollins Brewery. We're launching an alcohol-free lager in April. The audience is men aged 25-44 in Leeds. Tone should be upbeat. Budget £80k across CTV.",
      ),
    ).toEqual([
      ['Client', 'label'],
      ['Hollins Brewery', 'context'],
      ["We're launching an alcohol-free lager in April", 'context'],
      ['The audience is men aged 25-44 in Leeds', 'audience'],
      ['Tone should be upbeat', 'creative'],
      ['Budget £80k across CTV', 'plan'],
    ]);
  });

  it('an advertiser named as the subject of "want" is not part of the audience', () => {
    const sc = core('Redline Energy Drinks want 16-24s in Newcastle who play video games.');
    expect(sc.interests.join(' ')).not.toMatch(/energy|drink/i);
    expect(sc.geo.cities).toEqual(['Newcastle upon Tyne']);
  });

  it('a label names what its value is about, unless the value names an audience', () => {
    expect(roles('Pitch brief: Mason & Pike, wealth management.')[1]![1]).toBe('context');
    expect(core('Quick brief: UK-wide, excluding London.').exclusions).toEqual(['London']);
  });

  it('a brief set out in lines reads line by line, labels and bullets included', () => {
    const sc = core('Client: Greenway Bank\nWho: renters aged 25-38 in Leeds\nNot: existing customers, anyone under 21\n- no payday loans');
    expect(sc.geo.cities).toEqual(['Leeds']);
    expect(sc.demographics).toMatchObject({ ageMin: 25, ageMax: 38 });
    expect(sc.exclusions).toEqual(['existing customers', 'payday loans']);
    expect(sc.firmographics.sicCodes).toEqual([]);
  });

  it('a request to the reader and a line naming the client are not the audience', () => {
    expect(unresolved('Can you build a persona for us? Client is Vale Brewing Co. They are after ale drinkers in Derby.')).toEqual([]);
    expect(core('Kindred Vets Group. Cat owners in Glasgow.').firmographics.sicCodes).toEqual([]);
  });

  it('a parenthesis takes the role of what it qualifies', () => {
    expect(core('Campaign for Hale Mobility (stairlifts and mobility scooters). Over-65s in Yorkshire.').interests).toEqual([]);
    expect(core('Enterprise only (250+ staff), CFOs in Leeds.').firmographics.companySize).toBe('enterprise');
  });

  it('a name described as an organisation is the advertiser, so its town and sector are no target', () => {
    const sc = core('Pebble is a Leeds-based construction company. Wine lovers in Edinburgh.');
    expect(sc.geo.cities).toEqual(['Edinburgh']);
    expect(sc.firmographics.sicCodes).toEqual([]);
  });
});

describe('unresolved holds asks about the audience or placement, not prose', () => {
  it('dayparting and placement rules are reported with the words that carry them', () => {
    expect(unresolved('Women in Leeds who love yoga. Budget £50k, weighted to weekday evenings.')).toEqual([
      '"weighted to weekday evenings": when the ads run (dayparting) has no persona field; review before buying',
    ]);
    expect(unresolved('Runners in Bristol. Placements on premium lifestyle sites only.').join(' ')).toMatch(
      /lifestyle sites only.*placement rule/,
    );
    expect(unresolved('Runners in Bristol. No ads after 9pm.').join(' ')).toMatch(/9pm.*dayparting/);
  });

  it('tone, product and asks a field already holds are not constraints', () => {
    expect(
      unresolved('Runners in Bristol, any gender. Tone: warm, understated. We sell trail shoes. Flight runs from 1 May to 30 June.'),
    ).toEqual([]);
    expect(unresolved('Gender: any. Income: any. Runners in Bristol.')).toEqual([]);
  });

  it('an ask the audience clause makes that no field holds is still reported', () => {
    expect(unresolved('Runners in Bristol whose insurance renews in March. Tone should be warm.').join(' ')).toMatch(
      /insurance renews in March/,
    );
  });
});
