import { CITIES, CityEntry, GEONAMES_CITIES, findGeonamesCities } from './lexicon/cities';
import { COUNTRIES, COUNTRY_GROUPS, UNLISTABLE_AREAS } from './lexicon/countries';
import { AREAS_LIST, TV_ALIASES, TvRegion } from './lexicon/regions';
import { extractPostcodes } from './postcodes';
import { WORDS } from './lexicon/words';
import { Brief, Span, alternation, esc, uniq } from './text';

export interface GeoResult {
  countries: string[];
  /** True when countries came from the brief rather than the default. */
  countriesStated: boolean;
  cities: string[];
  postcodeDistricts: string[];
  tvRegions: string[];
  /** Counties, states and nations: not a persona field, kept for the reader. */
  regions: string[];
  unresolved: string[];
  confidence: Record<string, number>;
}

type Kind = 'tv' | 'city' | 'area' | 'country' | 'group' | 'unlistable';

interface Candidate extends Span {
  kind: Kind;
  value: string;
  countries: readonly string[];
  needsCue: boolean;
  needsTv: boolean;
  franchise: boolean;
  /** An ISO code written as such ("UK + IE"): a country only in a list beside another country. */
  besideOnly?: boolean;
}

interface Entry {
  phrase: string;
  kind: Kind;
  value: string;
  countries: readonly string[];
  needsCue: boolean;
  needsTv: boolean;
  franchise: boolean;
  caseSensitive: boolean;
}

// Short all-capital aliases (US, UK, LA) collide with ordinary words in
// lower case ("us", "la"), so they only match as written.
const isAcronym = (s: string): boolean => s.length <= 4 && !/[a-z]/.test(s);
const COMPASS = '(?:north|south|east|west|central|inner|outer|greater|north[ -]west|north[ -]east|south[ -]west|south[ -]east)';

function buildEntries(): Entry[] {
  const out: Entry[] = [];
  const add = (phrase: string, e: Omit<Entry, 'phrase' | 'caseSensitive'>): void => {
    out.push({ ...e, phrase, caseSensitive: isAcronym(phrase) });
  };
  for (const t of TV_ALIASES) {
    add(t.alias, { kind: 'tv', value: t.region, countries: ['GB'], needsCue: false, needsTv: t.needsTvContext, franchise: t.franchise });
  }
  for (const c of CITIES) {
    for (const p of [c.name, ...c.aliases]) {
      add(p, { kind: 'city', value: c.name, countries: [c.country], needsCue: c.needsCue, needsTv: false, franchise: false });
    }
  }
  for (const a of AREAS_LIST) {
    add(a.name, {
      kind: 'area',
      value: a.name.replace(/^the /, ''),
      countries: [a.country],
      needsCue: a.needsCue,
      needsTv: false,
      franchise: false,
    });
  }
  for (const c of COUNTRIES) {
    for (const p of c.names) {
      add(p, { kind: 'country', value: c.code, countries: [c.code], needsCue: c.needsCue, needsTv: false, franchise: false });
    }
  }
  for (const [name, codes] of Object.entries(COUNTRY_GROUPS)) {
    add(name, { kind: 'group', value: name, countries: codes, needsCue: false, needsTv: false, franchise: false });
  }
  for (const name of UNLISTABLE_AREAS) {
    add(name, { kind: 'unlistable', value: name, countries: [], needsCue: false, needsTv: false, franchise: false });
  }
  return out;
}

const ENTRIES = buildEntries();
const BY_PHRASE = new Map<string, Entry[]>();
for (const e of ENTRIES) {
  const key = e.phrase.toLowerCase().replace(/[ -]/g, ' ');
  BY_PHRASE.set(key, [...(BY_PHRASE.get(key) ?? []), e]);
}
// "UK-wide" names the UK; "Anglia-based" or "London-based" still name the place.
const GAZETTEER = new RegExp(`(?<![\\w-])(${alternation(ENTRIES.map((e) => e.phrase.toLowerCase()))})(?!\\w|-(?!wide\\b|based\\b))`, 'g');
const HAS_PLACE = new RegExp(GAZETTEER.source);

/** Whether a text names a place the gazetteer knows (any reading, cue or not). */
export function mentionsPlace(text: string): boolean {
  return HAS_PLACE.test(text.toLowerCase());
}
const COMPASS_BEFORE = new RegExp(`\\b${COMPASS}\\s+$`);

// "Leeds United", "Newcastle Falcons": a club, not a place to target.
const CLUB_AFTER = new RegExp(`^\\s+(?:${alternation(WORDS.clubWords)})\\b`);
const CUE_BEFORE =
  /(?:\b(?:in|across|around|near|from|within|throughout|covering|outside|to|of|at|between|and|or|&|including|plus)|,)\s*(?:the\s+)?$/;
const CUE_AFTER = /^\s*(?:area|city|region|postcode|centre|center|-based|based|,)/;
const LIST_GAP = /^\s*(?:,|and|or|&|\/|\+)?\s*(?:the\s+)?(?:,|and|or|&)?\s*$/;
const ISO_CODE = /(?<![\w-])([A-Z]{2})(?![\w-])/g;
const ISO_CODES: ReadonlySet<string> = new Set(COUNTRIES.map((c) => c.code));
const DESTINATION_BEFORE = /\b(?:to|in|into|from|around|visiting|visit|towards|via|flights?|trips?|holidays?)\s+(?:the\s+)?$/;

// Places named just before "TV region(s)"/"ITV regions" or in a list right after it.
function tvContextSpans(b: Brief): Span[] {
  const spans: Span[] = [];
  const marker = /\b(?:(?:itv|stv|utv|tv|television|barb)\s+(?:regions?|areas?|franchises?)|regions?|franchises?)\b/g;
  for (const m of b.find(marker, 'lower')) {
    const before = b.lower.slice(0, m.start);
    const cut = Math.max(
      before.lastIndexOf('.'),
      before.lastIndexOf(';'),
      before.lastIndexOf(':'),
      ...[' in ', ' across ', ' covering ', ' throughout ', ' within ', ' for ', ' of '].map((w) => {
        const at = before.lastIndexOf(w);
        return at < 0 ? -1 : at + w.length - 1;
      }),
    );
    spans.push({ start: Math.max(0, cut), end: m.start });
    const after = b.lower.slice(m.end);
    const stop = after.search(/[.;]|\b(?:who|that|with|aged|interested|excluding|but)\b/);
    spans.push({ start: m.end, end: m.end + (stop < 0 ? after.length : stop) });
  }
  return spans;
}

const inside = (s: Span, spans: readonly Span[]): boolean => spans.some((t) => s.start >= t.start && s.end <= t.end);

export function extractGeo(b: Brief, topicSpans: readonly Span[]): GeoResult {
  const tvSpans = tvContextSpans(b);
  const view = b.view;
  const cands: Candidate[] = [];
  for (const hit of b.find(GAZETTEER)) {
    const inner = hit.groupSpans[0]!;
    const phrase = view.slice(inner.start, inner.end).replace(/-/g, ' ');
    const entries = BY_PHRASE.get(phrase) ?? [];
    const compass = COMPASS_BEFORE.exec(view.slice(Math.max(0, inner.start - 20), inner.start));
    for (const e of entries) {
      if (e.caseSensitive && b.text.slice(inner.start, inner.end) !== e.phrase) continue;
      // A compass word before a city ("north London") stays part of the city,
      // so "South East London" is London rather than a TV region.
      const span = compass && e.kind === 'city' ? { start: inner.start - compass[0].length, end: inner.end } : inner;
      cands.push({
        start: span.start,
        end: span.end,
        kind: e.kind,
        value: e.value,
        countries: e.countries,
        needsCue: e.needsCue,
        needsTv: e.needsTv,
        franchise: e.franchise,
      });
    }
  }

  // GeoNames cities we do not name ourselves: only as written, capitalised, with a cue.
  for (const m of findGeonamesCities(b.caseView)) {
    const city = m.cities[0]!;
    cands.push({
      start: m.start,
      end: m.end,
      kind: 'city',
      value: city.name,
      countries: [city.country],
      needsCue: true,
      needsTv: false,
      franchise: false,
    });
  }

  for (const m of b.find(ISO_CODE, 'caseView')) {
    const code = m.groups[0]!;
    if (!ISO_CODES.has(code) || cands.some((c) => c.start < m.end && m.start < c.end)) continue;
    cands.push({
      start: m.start,
      end: m.end,
      kind: 'country',
      value: code,
      countries: [code],
      needsCue: true,
      needsTv: false,
      franchise: false,
      besideOnly: true,
    });
  }

  cands.push(...misspelledCities(b, cands));

  const usable = cands.filter((c) => {
    if (c.needsTv && !inside(c, tvSpans)) return false;
    if (c.kind === 'city' && CLUB_AFTER.test(b.lower.slice(c.end))) return false;
    if (c.needsCue && !/^[A-Z]/.test(b.text.slice(c.start, c.end))) return false;
    // Inside an interest/intent phrase a place after "to"/"in" is a topic
    // ("a holiday to Spain"); a place used as a modifier still counts.
    if (inside(c, topicSpans) && DESTINATION_BEFORE.test(b.lower.slice(0, c.start))) return false;
    return true;
  });
  // Longest first; at equal length a TV reading wins inside a TV phrase.
  usable.sort((x, y) => y.end - y.start - (x.end - x.start) || rank(y) - rank(x) || x.start - y.start);

  const accepted: Candidate[] = [];
  const taken = (c: Span): boolean => accepted.some((a) => c.start < a.end && a.start < c.end);
  const deferred: Candidate[] = [];
  for (const c of usable) {
    if (taken(c)) continue;
    if (c.needsCue) deferred.push(c);
    else accepted.push(c);
  }
  // Ambiguous names count with a place cue or when listed beside a known place.
  let grew = true;
  while (grew) {
    grew = false;
    for (const c of deferred) {
      if (accepted.includes(c) || taken(c)) continue;
      const before = b.lower.slice(Math.max(0, c.start - 40), c.start);
      const after = b.lower.slice(c.end, c.end + 20);
      const besidePlace = accepted.some(
        (a) =>
          (!c.besideOnly || a.kind === 'country' || a.kind === 'group') &&
          ((a.end <= c.start && LIST_GAP.test(b.lower.slice(a.end, c.start))) ||
            (a.start >= c.end && LIST_GAP.test(b.lower.slice(c.end, a.start)))),
      );
      if (((CUE_BEFORE.test(before) || CUE_AFTER.test(after)) && !c.besideOnly) || besidePlace) {
        accepted.push(c);
        grew = true;
      }
    }
  }
  accepted.sort((x, y) => x.start - y.start);
  for (const a of accepted) b.claim(a);
  return assemble(b, accepted);
}

// A city we name, misspelt by one letter ("Manchster", "Liverpoool"), counts
// like an ambiguous name: written with a capital, with a place cue or in a list.
const CITY_SPELLINGS = ENTRIES.filter((e) => e.kind === 'city' && /^[A-Za-z]{6,}$/.test(e.phrase));
const CAPITALISED = /(?<![\w-])[A-Z][a-z]{5,}(?![\w-])/g;

function misspelledCities(b: Brief, known: readonly Span[]): Candidate[] {
  const out: Candidate[] = [];
  for (const m of b.find(CAPITALISED, 'caseView')) {
    if (known.some((k) => k.start < m.end && m.start < k.end)) continue;
    const word = m.text.toLowerCase();
    const e = CITY_SPELLINGS.find((c) => oneEditApart(word, c.phrase.toLowerCase()));
    if (e)
      out.push({
        start: m.start,
        end: m.end,
        kind: 'city',
        value: e.value,
        countries: e.countries,
        needsCue: true,
        needsTv: false,
        franchise: false,
      });
  }
  return out;
}

/** One letter added, dropped, changed or two swapped. */
function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  if (a.length === b.length)
    return a.slice(i + 1) === b.slice(i + 1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2));
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

// TV aliases that survive filtering are either unambiguous region names
// ("Wales") or sit inside a TV phrase ("the London TV region").
function rank(c: Candidate): number {
  return c.kind === 'tv' ? 2 : 1;
}

function assemble(b: Brief, accepted: readonly Candidate[]): GeoResult {
  const postcodes = extractPostcodes(b);
  const cityHits = accepted.filter((a) => a.kind === 'city');
  const cities = resolveCities(cityHits, accepted);
  const tvRegions = uniq(accepted.filter((a) => a.kind === 'tv').map((a) => a.value as TvRegion));
  const nations = accepted.filter((a) => a.kind === 'country' && /^(?:england|scotland)$/i.test(b.slice(a)));
  const regions = uniq([...accepted.filter((a) => a.kind === 'area').map((a) => a.value), ...nations.map((a) => b.slice(a))]);
  const explicit = accepted.filter((a) => a.kind === 'country' || a.kind === 'group').flatMap((a) => a.countries);
  // "Polish shoppers in the UK": with a place named, a demonym is a
  // nationality, not where to advertise.
  const placeNamed = accepted.some((a) => a.kind !== 'unlistable') || postcodes.length > 0;
  const demonyms = placeNamed ? [] : demonymCountries(b);
  const implied = [
    ...cities.map((c) => c.country),
    ...accepted.filter((a) => a.kind === 'area' || a.kind === 'tv').flatMap((a) => a.countries),
    ...(postcodes.length ? ['GB'] : []),
  ];
  const all = uniq([...explicit, ...demonyms, ...implied]);
  const unresolved = accepted
    .filter((a) => a.kind === 'unlistable')
    .map((a) => `geography "${b.slice(a)}" is too broad to list as countries; countries left at the default`);

  const confidence: Record<string, number> = {};
  if (all.length) confidence['geo.countries'] = explicit.length || demonyms.length ? 0.95 : 0.85;
  if (cities.length) confidence['geo.cities'] = cityHits.some((c) => c.needsCue) ? 0.8 : 0.95;
  if (postcodes.length) confidence['geo.postcodeDistricts'] = 0.95;
  if (tvRegions.length) confidence['geo.tvRegions'] = accepted.some((a) => a.kind === 'tv' && a.franchise) ? 0.9 : 0.85;
  return {
    countries: all.length ? all : ['GB'],
    countriesStated: all.length > 0,
    cities: uniq(cities.map((c) => c.name)),
    postcodeDistricts: postcodes,
    tvRegions,
    regions,
    unresolved,
    confidence,
  };
}

// Every reading of a city name or alias, in list order.
const CITY_READINGS = new Map<string, CityEntry[]>();
for (const c of CITIES) for (const n of [c.name, ...c.aliases]) CITY_READINGS.set(n, [...(CITY_READINGS.get(n) ?? []), c]);

// One name in two countries (Perth, Kingston): prefer the country the brief
// names elsewhere, else the first listed (UK) reading.
function resolveCities(hits: readonly Candidate[], all: readonly Candidate[]): { name: string; country: string }[] {
  const stated = new Set(all.filter((a) => a.kind !== 'city').flatMap((a) => a.countries));
  const out: { name: string; country: string }[] = [];
  for (const h of hits) {
    if (out.some((o) => o.name === h.value && o.country === h.countries[0])) continue;
    const rivals = [...(CITY_READINGS.get(h.value) ?? []), ...(GEONAMES_CITIES.get(h.value.toLowerCase()) ?? [])];
    const pick = rivals.find((r) => stated.has(r.country)) ?? rivals[0];
    out.push({ name: h.value, country: pick?.country ?? h.countries[0]! });
  }
  return out;
}

const PEOPLE =
  'people|consumers|shoppers|households|families|residents|adults|audiences?|users|women|men|mums|moms|mothers|dads|fathers|parents|students|' +
  'millennials|homeowners|drivers|voters|viewers|listeners|readers|businesses|companies|firms|smes|smbs|startups|start-ups|retailers|' +
  'cfos|ctos|ceos|cmos|executives|decision[ -]makers|professionals|buyers|investors|gamers|teens|teenagers|retirees|pensioners|workers|' +
  'employees|nationals|citizens|customers|motorists|commuters';
const ADJECTIVES = COUNTRIES.flatMap((c) => c.adjectives.map((a) => ({ a, code: c.code })));
const PLURALS = COUNTRIES.flatMap((c) => c.plurals.map((p) => ({ p, code: c.code })));
const ADJ_RE = new RegExp(`\\b(${ADJECTIVES.map((x) => esc(x.a)).join('|')})\\s+(?:${PEOPLE})\\b`, 'g');
const PLURAL_RE = new RegExp(`\\b(${PLURALS.map((x) => esc(x.p)).join('|')})\\b`, 'g');

// "German shoppers" sets Germany; "German cars" does not.
function demonymCountries(b: Brief): string[] {
  const out: string[] = [];
  for (const h of b.find(ADJ_RE, 'caseView')) {
    const adj = h.groups[0]!;
    const found = ADJECTIVES.find((x) => x.a === adj);
    if (found) {
      out.push(found.code);
      b.claim(h.groupSpans[0]!);
    }
  }
  for (const h of b.find(PLURAL_RE, 'caseView')) {
    const found = PLURALS.find((x) => x.p === h.groups[0]);
    if (found && !/great\s+$/i.test(b.text.slice(0, h.start))) {
      out.push(found.code);
      b.claim(h);
    }
  }
  return out;
}
