import { UK_CITY_ROWS } from './cities-uk';
import { WORLD_CITY_ROWS } from './cities-world';

// Cities by English name. Row format: Canonical|aliases|country|flags
// Flag "?" = the name is also a common word or first name (Reading, Bath,
// Sydney, Nice...): it only counts when capitalised and with a place cue.
// A name listed under two countries (Perth, Halifax, Kingston) is resolved by context;
// the first row is the default.

export interface CityEntry {
  name: string;
  aliases: string[];
  country: string;
  needsCue: boolean;
}

function parse(rows: string): CityEntry[] {
  return rows
    .trim()
    .split('\n')
    .map((line) => {
      const [name, aliases, country, flags] = line.split('|');
      return {
        name: name!.trim(),
        aliases: (aliases ?? '')
          .split(';')
          .map((x) => x.trim())
          .filter(Boolean),
        country: country!.trim(),
        needsCue: (flags ?? '').includes('?'),
      };
    });
}

export const CITIES: readonly CityEntry[] = [...parse(UK_CITY_ROWS), ...parse(WORLD_CITY_ROWS)];
