// Sentences the persona property suites combine. Audience sentences describe
// who to reach; the rest are what agency briefs mix in (product, tone, budget,
// dates, creative) and what they rule out. Audience places never overlap the
// excluded places, so a brief is never self-contradictory.

export const AUDIENCES = [
  'Women aged 25-34 in Manchester who are into yoga.',
  'Small business owners in Leeds looking for accounting software.',
  'Dads in Glasgow who watch live football.',
  'CFOs and finance directors at mid-market manufacturing companies in the Midlands TV region.',
  'Affluent homeowners over 55 across the UK interested in cruises.',
  'Students under 25 in Bristol who game on PC.',
  'The audience is men aged 30-50 in Cardiff who play golf.',
  'Target: IT directors at banks in London.',
  'Audience: runners in Edinburgh aged 20-35.',
  'Keen gardeners in their sixties in Kent.',
  'Commuters in Leeds who cycle to work.',
  'Gamers aged 16-24 in Glasgow.',
  'Over-65s in Bristol who enjoy crosswords.',
  'Engineering managers at software companies in Edinburgh.',
  'High earners aged 35-54 in London researching electric cars.',
  'Fans of the Premier League aged 18-34 in Manchester.',
  'We want new parents in London who are looking for a family car.',
  'Wine lovers in Edinburgh and Glasgow, mid income.',
] as const;

/** Audiences whose ages leave room for an excluded band: none stated, or a wide range. */
export const AGE_ROOM_AUDIENCES = [
  'Dads in Glasgow who watch live football.',
  'Commuters in Leeds who cycle to work.',
  'Target: IT directors at banks in London.',
  'Adults aged 18-80 in Manchester who are into yoga.',
  'Wine lovers in Edinburgh and Glasgow, mid income.',
  'Engineering managers at software companies in Edinburgh.',
  'People aged 16 to 75 across the UK interested in cruises.',
] as const;

export interface Surface {
  /** How the brief names the category. */
  text: string;
  /** Words each of which must reach the exclusions and no positive field. */
  keys: string[];
}

const s = (text: string, ...keys: string[]): Surface => ({ text, keys: keys.length ? keys : [text] });

/** Sensitive categories as briefs name them. */
export const CATEGORIES: Record<string, Surface[]> = {
  gambling: [s('gambling'), s('betting'), s('online casinos', 'casino'), s('sports betting', 'betting')],
  alcohol: [s('alcohol'), s('beer and spirits', 'beer', 'spirits'), s('alcohol brands', 'alcohol')],
  tobacco: [s('tobacco'), s('smoking'), s('vaping')],
  adult: [s('adult content', 'adult'), s('adult sites', 'adult'), s('explicit content', 'explicit')],
  politics: [s('politics'), s('political content', 'political'), s('elections', 'election')],
  news: [s('news'), s('hard news', 'news'), s('news sites', 'news')],
  crypto: [s('crypto'), s('cryptocurrency'), s('bitcoin')],
  weapons: [s('weapons'), s('firearms'), s('guns')],
  religion: [s('religion'), s('religious content', 'religious')],
  health: [s('health conditions', 'health'), s('diabetes'), s('cancer'), s('mental health', 'mental health')],
  payday: [s('payday lending', 'payday'), s('payday loans', 'payday'), s('payday lenders', 'payday')],
};

/** Ways a brief rules a thing out: a sentence of its own. */
export const NEGATION_SENTENCES: ((x: string) => string)[] = [
  (x) => `No ${x}.`,
  (x) => `Not ${x}.`,
  (x) => `Avoid ${x}.`,
  (x) => `Please avoid anything about ${x}.`,
  (x) => `Keep away from ${x}.`,
  (x) => `Keep our ads away from ${x}.`,
  (x) => `Exclude ${x}.`,
  (x) => `Nothing near ${x}, please.`,
  (x) => `Don't show next to ${x}.`,
  (x) => `Don't show our ads next to ${x} content.`,
  (x) => `Do not appear alongside ${x}.`,
  (x) => `Steer clear of ${x}.`,
  (x) => `${x[0]!.toUpperCase()}${x.slice(1)} is off-limits.`,
  (x) => `We don't want to appear next to ${x}.`,
  (x) => `Brand safety: no ${x}.`,
  (x) => `Except ${x}.`,
  (x) => `Other than ${x}, any content is fine.`,
];

/** "X-free" only reads for a single word. */
export const FREE_SENTENCES: ((x: string) => string)[] = [(x) => `Keep the campaign ${x}-free.`, (x) => `A ${x}-free environment, please.`];

/** Ways a brief rules a thing out inside the audience sentence (appended to it). */
export const NEGATION_INLINE: ((x: string) => string)[] = [
  (x) => `, except ${x}`,
  (x) => `, other than ${x}`,
  (x) => `, but not ${x}`,
  (x) => `, excluding ${x}`,
  (x) => `; no ${x}`,
  (x) => `, and please avoid ${x}`,
  (x) => `, nothing near ${x}`,
  (x) => `, keeping away from ${x}`,
];

/** Several things ruled out in one list. */
export const NEGATION_LISTS: ((xs: string[]) => string)[] = [
  (xs) => `Avoid ${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]} content.`,
  (xs) => `${xs.map((x) => `No ${x}`).join(', ')}.`,
  (xs) => `Keep away from ${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}.`,
  (xs) => `Nothing near ${xs.slice(0, -1).join(', ')} or ${xs[xs.length - 1]}, and avoid anything political too.`,
  (xs) => `Don't show next to ${xs.slice(0, -1).join(', ')} or ${xs[xs.length - 1]}.`,
];

export const EXCLUDED_PLACES = [
  'Birmingham',
  'Liverpool',
  'Newcastle',
  'Belfast',
  'Sheffield',
  'Nottingham',
  'Northern Ireland',
  'Scotland',
  'Wales',
  'Yorkshire',
  'Cornwall',
  'France',
  'Spain',
  'Ireland',
] as const;

export const PLACE_SENTENCES: ((p: string) => string)[] = [
  (p) => `Not ${p}.`,
  (p) => `Excluding ${p}.`,
  (p) => `No ${p}, please.`,
  (p) => `Avoid ${p}.`,
  (p) => `Don't target ${p}.`,
  (p) => `We are not targeting anyone in ${p}.`,
  (p) => `${p} is excluded.`,
  (p) => `Nothing in ${p}.`,
];
export const PLACE_INLINE: ((p: string) => string)[] = [
  (p) => `, not ${p}`,
  (p) => `, except ${p}`,
  (p) => `, excluding ${p}`,
  (p) => `, but not in ${p}`,
  (p) => `, other than ${p}`,
  (p) => `; avoid ${p}`,
  (p) => `, except those in ${p}`,
];

export const UNDER_SENTENCES: ((n: number) => string)[] = [
  (n) => `No under-${n}s.`,
  (n) => `Nobody under ${n}.`,
  (n) => `Exclude under-${n}s.`,
  (n) => `Keep away from under-${n}s.`,
  (n) => `Exclude anyone under ${n}.`,
  (n) => `Keep it away from under-${n}s entirely.`,
  (n) => `Leave out anyone under ${n}.`,
];
export const UNDER_INLINE: ((n: number) => string)[] = [
  (n) => `, but not under-${n}s`,
  (n) => `, not under ${n}`,
  (n) => `, excluding under-${n}s`,
];
/** "No one over 65" keeps 65; "over-65s" name the group aged 65 and up, so excluding them keeps 64. */
export const OVER_SENTENCES: ((m: number) => { text: string; keptMax: number })[] = [
  (m) => ({ text: `No one over ${m}.`, keptMax: m }),
  (m) => ({ text: `Leave out anyone over ${m}.`, keptMax: m }),
  (m) => ({ text: `Nobody older than ${m}.`, keptMax: m }),
  (m) => ({ text: `Exclude over-${m}s.`, keptMax: m - 1 }),
  (m) => ({ text: `Keep away from over-${m}s.`, keptMax: m - 1 }),
];

const pick = <T>(xs: readonly T[], i: number): T => xs[i % xs.length]!;

/** Sentences about the product, tone, budget, dates and creative, with audience-like words in them. */
export function proseSentence(kind: number, a: number, b: number): string {
  const products = [
    'a new gin',
    'an e-bike range',
    'a cycling app',
    'a craft beer',
    'a gaming laptop',
    'a savings account',
    'running shoes',
    'a golf holiday',
  ];
  const people = ['runners', 'families', 'students', 'young professionals', 'dads', 'retirees'];
  const places = ['London', 'Manchester', 'Cornwall', 'Paris', 'Scotland'];
  const brands = ['Northgate Motors', 'Hollins Brewery', 'Pebble', 'Atlas Gym Group', 'Tidewater Cruises'];
  const months = ['March', 'April', 'May', 'September', 'October', 'January'];
  const adjectives = ['warm', 'playful', 'confident', 'premium', 'cheeky', 'understated'];
  const templates = [
    () => `We're launching ${pick(products, a)} in ${pick(months, b)}.`,
    () =>
      `The ads should run in ${pick(months, a)}, when people are planning their ${pick(['summer holidays', 'Christmas shopping', 'home renovations'], b)}.`,
    () => `Tone should be ${pick(adjectives, a)} and never ${pick(['preachy', 'pushy', 'flashy', 'salesy'], b)}.`,
    () => `Tone: ${pick(adjectives, a)}, ${pick(adjectives, b + 1)}.`,
    () => `Budget is £${20 + a * 5}k across ${pick(['CTV', 'social', 'YouTube', 'radio', 'DOOH'], b)}.`,
    () =>
      `Creative will show ${pick(people, a)} ${pick(['cycling', 'cooking', 'playing golf', 'walking dogs'], b)} in ${pick(places, a + b)}.`,
    () => `Copy should mention the ${10 + a}% discount for over-60s.`,
    () => `${pick(brands, a)} is a ${pick(places, b)}-based ${pick(['software', 'construction', 'manufacturing', 'retail'], a)} company.`,
    () => `Hi team, quick brief for ${pick(brands, a)}.`,
    () => `Flight runs from ${1 + (a % 27)} ${pick(months, b)} to ${1 + (b % 27)} ${pick(months, a + 1)}.`,
    () => `The campaign launches on ${1 + (a % 27)} ${pick(months, b)} with a ${2 + (b % 6)}-week flight.`,
    () => `We want to be seen as ${pick(adjectives, a)}.`,
    () => `The product is ${pick(products, a)}, loved by ${pick(people, b)}.`,
    () => `Our client sells ${pick(products, a)} online.`,
    () => `Please keep the creative ${pick(adjectives, b)}.`,
  ];
  return pick(templates, kind)();
}
export const PROSE_KINDS = 15;

/** Asks no persona field holds (dayparting, placement, first-party data), with a word the report must quote. */
export const ASKS: { text: string; key: string }[] = [
  { text: 'Run weekday evenings only.', key: 'evenings' },
  { text: 'No ads after 9pm.', key: '9pm' },
  { text: 'Spots in the breakfast and drivetime dayparts, please.', key: 'breakfast' },
  { text: 'The ads should run 7am-10am, Monday to Friday.', key: '7am' },
  { text: 'Weight the budget to weekends.', key: 'weekends' },
  { text: 'Placements on premium lifestyle sites only.', key: 'lifestyle sites' },
  { text: 'Run alongside football coverage.', key: 'football coverage' },
  { text: 'Use a lookalike of our CRM list.', key: 'lookalike' },
  { text: 'Retarget people who visited our website.', key: 'visited our website' },
];

/** Asks a persona already holds: not constraints. */
export const HELD_ASKS = ['Any gender.', 'Gender: any.', 'Any income.', 'Any age.', 'Any company size.', 'Income: any.'];
