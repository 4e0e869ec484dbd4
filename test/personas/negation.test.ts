import { cleanItem } from '../../shared/personas/negation';
import { core } from './helpers';

describe('what a brief rules out is an exclusion, never a target', () => {
  it('a sensitive category keeps its industry out of the persona', () => {
    const sc = core('Pebble savings app: 18-30s in Leeds. No crypto, no payday lenders, no gambling.');
    expect(sc.exclusions).toEqual(['crypto', 'payday lenders', 'gambling']);
    expect(sc.firmographics.sicCodes).toEqual([]);
  });

  it('a list after one cue is read whole, up to a new clause', () => {
    expect(core('Avoid funeral, will-writing and care-home advertising adjacency. Over-70s in Kent.').exclusions).toEqual([
      'funeral',
      'will-writing',
      'care-home',
    ]);
    expect(core('Nothing near alcohol, gambling or betting ads, and avoid anything about self-harm. Gamers in Leeds.').exclusions).toEqual([
      'alcohol',
      'gambling',
      'betting',
      'self-harm',
    ]);
  });

  it('a scope stops where a new clause starts', () => {
    const sc = core('Car buyers aged 30-49 in the Granada region, but not under-35s, researching hybrid cars.');
    expect(sc.demographics).toMatchObject({ ageMin: 35, ageMax: 49 });
    expect(sc.intentTopics.join(' ')).toMatch(/hybrid/);
    expect(core('We want people across England, except Scotland where the product is not sold.').exclusions).toEqual(['Scotland']);
  });

  it('a trailing cue rules out what precedes it', () => {
    expect(core('Weapons, adult and gambling content are strictly off-limits. Runners in Leeds.').exclusions).toEqual([
      'Weapons',
      'adult',
      'gambling',
    ]);
    const sc = core('Men aged 35-65 in Scotland, Northern Ireland excluded.');
    expect(sc.exclusions).toEqual(['Northern Ireland']);
    expect(sc.geo.tvRegions).toEqual([]);
  });

  it('"X-free" rules X out only where it describes the placement, not a product', () => {
    expect(core('Runners in Leeds. Keep the campaign gambling-free.').exclusions).toEqual(['gambling']);
    expect(core('Fans of alcohol-free beer in Leeds.').exclusions).toEqual([]);
  });

  it('an excluded age band narrows the range in any wording and is never the range itself', () => {
    expect(core('Cider lovers in Bristol. Keep it away from under-25s entirely.').demographics).toMatchObject({ ageMin: 25 });
    expect(core('Cider lovers in Bristol. Keep it away from under-25s entirely.').demographics.ageMax).toBeUndefined();
    expect(core('Adults in Leeds who like golf, but nobody over 70.').demographics.ageMax).toBe(70);
  });

  it('negated targeting verbs rule out their object', () => {
    expect(core("Homeowners in Kent. We're not interested in renters.").exclusions).toEqual(['renters']);
    expect(core('Homeowners in Kent. We are not targeting anyone in cities like Canterbury.').geo.cities).toEqual([]);
    expect(core("Homeowners in Kent. Don't show our ads near animal cruelty stories.").exclusions).toEqual(['animal cruelty']);
  });

  it('a negated verb that is not about targeting rules nothing out', () => {
    expect(core("People in London who never miss Wimbledon. We're not selling in Wales this year.").exclusions).toEqual([]);
    expect(core('Families in Leeds, not just runners but walkers too.').exclusions).toEqual([]);
  });

  it('what is not the excluded thing is trimmed from an exclusion', () => {
    expect(cleanItem('any content about shipwrecks')).toBe('shipwrecks');
    expect(cleanItem('those in Birmingham')).toBe('Birmingham');
    expect(cleanItem('anyone who has travelled with us before')).toBe('anyone who has travelled with us before');
    expect(cleanItem('sports betting sites too')).toBe('sports betting');
  });
});
