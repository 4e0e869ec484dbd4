// TV regions (BARB areas), ITV/STV/UTV franchise names, sub-national areas
// (counties, states) and UK postcode areas.

export const TV_REGIONS = [
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
export type TvRegion = (typeof TV_REGIONS)[number];

export interface TvAlias {
  alias: string;
  region: TvRegion;
  /** Counts only inside a "... TV region(s)" phrase: the word has other meanings. */
  needsTvContext: boolean;
  franchise: boolean;
}

const tv = (region: TvRegion, names: string[], franchise = false, needsTvContext = false): TvAlias[] =>
  names.map((alias) => ({ alias, region, franchise, needsTvContext }));

export const TV_ALIASES: readonly TvAlias[] = [
  // Region names as planners write them.
  ...tv('London', ['london'], false, true),
  ...tv('Midlands', ['midlands', 'east midlands', 'west midlands', 'the midlands']),
  ...tv('North West', ['north west', 'north-west', 'north west england', 'north west of england']),
  ...tv('Yorkshire', ['yorkshire', 'west yorkshire', 'south yorkshire', 'north yorkshire', 'east yorkshire']),
  ...tv('North East', ['north east', 'north-east', 'north east england', 'north east of england']),
  ...tv('East of England', ['east of england', 'east anglia']),
  ...tv('South and South East', ['south and south east', 'south east', 'south-east', 'south east england', 'south east of england']),
  ...tv('South West', ['south west', 'south-west', 'south west england', 'south west of england']),
  ...tv('West', ['west of england']),
  ...tv('West', ['west'], false, true),
  ...tv('Wales', ['wales']),
  ...tv('Border', ['border', 'borders'], false, true),
  ...tv('Central Scotland', ['central scotland']),
  ...tv('North Scotland', ['north scotland', 'northern scotland', 'north of scotland', 'north east scotland', 'highlands and islands']),
  ...tv('Northern Ireland', ['northern ireland']),
  ...tv('Channel Islands', ['channel islands']),
  // Franchise names (README mapping) and their ITV-prefixed forms.
  ...tv('London', ['itv london', 'carlton', 'lwt', 'london weekend television'], true),
  ...tv('Midlands', ['itv central', 'central tv', 'central television'], true),
  ...tv('Midlands', ['central'], true, true),
  ...tv('North West', ['granada', 'itv granada'], true),
  ...tv('Yorkshire', ['itv yorkshire', 'yorkshire television', 'yorkshire tv'], true),
  ...tv('North East', ['tyne tees', 'tyne-tees', 'itv tyne tees'], true),
  ...tv('East of England', ['anglia', 'itv anglia'], true),
  ...tv('South and South East', ['meridian', 'itv meridian'], true),
  ...tv('South West', ['west country', 'westcountry', 'itv west country', 'itv westcountry'], true),
  ...tv('West', ['htv', 'htv west', 'itv west'], true),
  ...tv('Wales', ['itv wales', 'htv wales', 'itv cymru wales'], true),
  ...tv('Border', ['itv border', 'border tv', 'border television'], true),
  ...tv('Central Scotland', ['stv central', 'stv glasgow', 'stv edinburgh'], true),
  ...tv('North Scotland', ['stv north', 'grampian', 'grampian tv', 'stv aberdeen', 'stv dundee'], true),
  ...tv('Northern Ireland', ['utv', 'ulster television', 'itv ulster'], true),
  ...tv('Channel Islands', ['channel tv', 'channel television', 'itv channel', 'itv channel tv'], true),
  ...tv('Channel Islands', ['channel'], true, true),
];

// Sub-national areas: they fix the country and are kept in geo.regions, but
// are neither cities nor TV regions (README: only TV region names and
// franchises go to tvRegions). "?" = needs a place cue.
const AREAS = `
GB|England;Scotland;Cornwall;Devon;Dorset;Somerset;Wiltshire;Hampshire;Surrey;Sussex;East Sussex;West Sussex;Kent;Essex;Hertfordshire;Buckinghamshire;Berkshire;Oxfordshire;Gloucestershire;the Cotswolds;Cotswolds;Norfolk;Suffolk;Cambridgeshire;Lincolnshire;Leicestershire;Nottinghamshire;Derbyshire;Staffordshire;Shropshire;Warwickshire;Worcestershire;Herefordshire;Northamptonshire;Bedfordshire;Cheshire;Lancashire;Cumbria;Merseyside;Northumberland;County Durham;Tyne and Wear;Teesside;the Home Counties;Home Counties;the Lake District;Lake District;Peak District;Scottish Highlands;the Highlands;Fife;Lothian;Ayrshire;Lanarkshire;Aberdeenshire;Isle of Wight;Anglesey;Pembrokeshire;Gwynedd;Powys;Snowdonia;Carmarthenshire;County Antrim;County Down;Isle of Skye;Orkney;Shetland;Hebrides
US|California;Texas;Florida;New York State;Illinois;Pennsylvania;Ohio;Michigan;North Carolina;South Carolina;New Jersey;Virginia?;Massachusetts;Arizona;Tennessee;Indiana?;Missouri;Maryland;Wisconsin;Colorado;Minnesota;Alabama;Louisiana;Kentucky;Oregon;Oklahoma;Connecticut;Utah;Iowa;Nevada;Arkansas;Mississippi;Kansas;New Mexico;Nebraska;Idaho;Hawaii;Alaska;Maine?;Montana;Delaware;Vermont;Wyoming;Rhode Island;New Hampshire;West Virginia;North Dakota;South Dakota;Washington State
CA|Ontario;Quebec;British Columbia;Alberta;Manitoba;Saskatchewan;Nova Scotia;New Brunswick
AU|New South Wales;Victoria?;Queensland;Western Australia;South Australia;Tasmania
DE|Bavaria;Baden-Württemberg;North Rhine-Westphalia
ES|Catalonia;Andalusia;the Canary Islands;Canary Islands;the Balearics;Balearic Islands;Mallorca;Majorca;Ibiza;Tenerife
IT|Lombardy;Tuscany;Sicily;Sardinia
FR|Provence;Brittany;Normandy;Île-de-France;Ile-de-France
`;

export interface AreaEntry {
  name: string;
  country: string;
  needsCue: boolean;
}

export const AREAS_LIST: readonly AreaEntry[] = AREAS.trim()
  .split('\n')
  .flatMap((line) => {
    const [country, names] = line.split('|');
    return names!.split(';').map((raw) => ({
      name: raw.replace('?', '').trim(),
      country: country!.trim(),
      needsCue: raw.includes('?'),
    }));
  });

// UK postcode areas (the letters before the first digit of an outward code).
export const POSTCODE_AREAS: ReadonlySet<string> = new Set(
  (
    'AB AL B BA BB BD BH BL BN BR BS BT CA CB CF CH CM CO CR CT CV CW DA DD DE DG DH DL DN DT DY ' +
    'E EC EH EN EX FK FY G GL GU GY HA HD HG HP HR HS HU HX IG IM IP IV JE KA KT KW KY ' +
    'L LA LD LE LL LN LS LU M ME MK ML N NE NG NN NP NR NW OL OX PA PE PH PL PO PR ' +
    'RG RH RM S SA SE SG SK SL SM SN SO SP SR SS ST SW SY TA TD TF TN TQ TR TS TW ' +
    'UB W WA WC WD WF WN WR WS WV YO ZE'
  ).split(' '),
);

// Districts that end in a letter exist only in central London (plus a few
// special cases). Anything else shaped like "B2B" or "M4A" is not a district.
export function validLetterDistrict(district: string): boolean {
  return /^(?:EC[1-4][A-Z]|WC[12][A-Z]|W1[A-Z]|SW1[A-Z]|SE1P|NW1W|N1[CP]|E1W|E14|E20)$/.test(district);
}
