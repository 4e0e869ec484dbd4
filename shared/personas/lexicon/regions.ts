import { z } from 'zod';
import { CountryCode, WordList, parseLexicon } from './load';
import raw from './regions.json';

// TV regions (BARB areas), ITV/STV/UTV franchise names, sub-national areas
// (counties, states) and UK postcode areas, from regions.json.

const TV_REGION_NAMES = [
  'London',
  'Midlands',
  'North West',
  'Yorkshire',
  'North East',
  'East of England',
  'South and South East',
  'South West',
  'West',
  'Wales',
  'Border',
  'Central Scotland',
  'North Scotland',
  'Northern Ireland',
  'Channel Islands',
] as const;
export type TvRegion = (typeof TV_REGION_NAMES)[number];

const Regions = z.object({
  about: z.string(),
  tvRegions: z.array(z.enum(TV_REGION_NAMES)),
  tvNames: z.array(
    z.object({
      region: z.enum(TV_REGION_NAMES),
      names: WordList,
      franchise: z.boolean().optional(),
      needsTvContext: z.boolean().optional(),
    }),
  ),
  areas: z.record(CountryCode, z.array(z.string().min(1))),
  areasNeedingCue: z.array(z.string().min(1)),
  postcodeAreas: z.array(z.string().regex(/^[A-Z]{1,2}$/)),
  letterDistricts: z.array(z.string().regex(/^[A-Z]{1,2}\d[A-Z]$/)),
});
const R = parseLexicon('regions.json', Regions, raw);

export const TV_REGIONS: readonly TvRegion[] = R.tvRegions;

export interface TvAlias {
  alias: string;
  region: TvRegion;
  /** Counts only inside a "... TV region(s)" phrase: the word has other meanings. */
  needsTvContext: boolean;
  franchise: boolean;
}
export const TV_ALIASES: readonly TvAlias[] = R.tvNames.flatMap((g) =>
  g.names.map((alias) => ({ alias, region: g.region, franchise: g.franchise ?? false, needsTvContext: g.needsTvContext ?? false })),
);

export interface AreaEntry {
  name: string;
  country: string;
  needsCue: boolean;
}
const CUE = new Set(R.areasNeedingCue);
// Counties, states and nations: they fix the country and are kept in geo.regions.
export const AREAS_LIST: readonly AreaEntry[] = Object.entries(R.areas).flatMap(([country, names]) =>
  names.map((name) => ({ name, country, needsCue: CUE.has(name) })),
);

/** UK postcode areas (the letters before the first digit of an outward code). */
export const POSTCODE_AREAS: ReadonlySet<string> = new Set(R.postcodeAreas);
const LETTER_DISTRICTS: ReadonlySet<string> = new Set(R.letterDistricts);

/** Districts that end in a letter exist only in central London (and a few special cases). */
export function validLetterDistrict(district: string): boolean {
  return LETTER_DISTRICTS.has(district);
}
