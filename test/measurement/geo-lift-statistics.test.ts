import { evaluateGeoLift, type GeoLiftResult } from '../../shared/measurement/geo-lift';
import defaultMarkets from '../../shared/measurement/default-markets.json';
import { asGeoPanel, syntheticPanel, type PanelOptions } from './synthetic';

/** The figures are part of the evidence: print them with the results. */
const report = (line: string) => process.stdout.write(`${line}\n`);

const MARKETS = defaultMarkets.map((m) => m.id);
const SEEDS = Array.from({ length: 200 }, (_, i) => i + 1);
const design = { testMarket: 'london', alpha: 0.05, minPreDays: 21, minControlMarkets: 2 };

function run(o: PanelOptions, expectedLiftPct: number) {
  const panel = syntheticPanel(o);
  const outcome = evaluateGeoLift(asGeoPanel(panel, MARKETS), { ...design, expectedLiftPct, exposureStart: panel.exposureStart });
  return { panel, outcome };
}

describe('geo-lift by time-based regression, over 200 seeded synthetic panels', () => {
  test('with a true lift of 10%, the 95% interval of the incremental total covers the truth in at least 90% of seeds', () => {
    let covered = 0;
    let liftCovered = 0;
    for (const seed of SEEDS) {
      const { panel, outcome } = run({ seed, lift: 0.1 }, 10);
      if (!('result' in outcome)) throw new Error(`seed ${seed} was refused: ${outcome.refused.detail}`);
      const truth = panel.treatedPostTotal - panel.untreatedPostTotal;
      const [lo, hi] = outcome.result.estimate.incrementalInterval;
      if (truth >= lo && truth <= hi) covered++;
      const [plo, phi] = outcome.result.estimate.liftPctInterval;
      if (10 >= plo && 10 <= phi) liftCovered++;
    }
    report(`true lift 10%: incremental interval covered the truth in ${covered}/200 seeds, lift % interval in ${liftCovered}/200`);
    expect(covered).toBeGreaterThanOrEqual(180);
    expect(liftCovered).toBeGreaterThanOrEqual(180);
  });

  test('with no true lift, an effect is claimed in at most 7% of seeds at α = 0.05', () => {
    let claims = 0;
    let evaluated = 0;
    for (const seed of SEEDS) {
      const { outcome } = run({ seed, lift: 0 }, 10);
      if (!('result' in outcome)) continue;
      evaluated++;
      if (outcome.result.estimate.conclusion === 'lift-detected') claims++;
    }
    report(`no true lift: ${claims}/${evaluated} evaluated seeds claimed an effect`);
    // Every seed is powered for a 10% lift here, so the rate is over all 200.
    expect(evaluated).toBe(200);
    expect(claims).toBeLessThanOrEqual(14);
  });

  test('an underpowered design is refused on every seed where its MDE exceeds the expected lift, and evaluated on every other', () => {
    let refused = 0;
    let evaluated = 0;
    for (const seed of SEEDS) {
      // Three weeks of noisy history and one week of exposure: the MDE straddles the expected 12%.
      const { outcome } = run({ seed, lift: 0.12, noise: 0.1, preDays: 21, postDays: 7 }, 12);
      if ('refused' in outcome) {
        refused++;
        expect(outcome.refused.code).toBe('underpowered');
        expect(outcome.refused.figures.minimumDetectableLiftPct as number).toBeGreaterThan(12);
        // It says what would power it: more post-period days, more pre-period days, or better control markets.
        const { postPeriodDaysNeeded, prePeriodDaysNeeded } = outcome.refused.figures as Record<string, number | null>;
        if (postPeriodDaysNeeded !== null) expect(postPeriodDaysNeeded).toBeGreaterThan(7);
        if (prePeriodDaysNeeded !== null) expect(prePeriodDaysNeeded).toBeGreaterThan(21);
        if (postPeriodDaysNeeded === null && prePeriodDaysNeeded === null) expect(outcome.refused.detail).toMatch(/control markets/);
      } else {
        evaluated++;
        expect((outcome.result as GeoLiftResult).design.minimumDetectableLiftPct).toBeLessThanOrEqual(12);
      }
    }
    report(`underpowered design: ${refused}/200 refused, ${evaluated}/200 evaluated`);
    expect(refused).toBeGreaterThan(0);
    expect(evaluated).toBeGreaterThan(0);
  });

  test('the power check never looks at the test market after exposure: the MDE is the same whatever the lift', () => {
    for (const seed of SEEDS.slice(0, 20)) {
      const mde = (lift: number) => {
        const { outcome } = run({ seed, lift, noise: 0.2, preDays: 21, postDays: 7 }, 1000);
        if (!('result' in outcome)) throw new Error('expected an evaluation');
        return outcome.result.design.minimumDetectableLiftPct;
      };
      expect(mde(0.5)).toBe(mde(0));
    }
  });
});
