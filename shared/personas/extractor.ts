import { combineAges, findAges, findExcludedAges } from './ages';
import { findUnresolved } from './constraints';
import { findGender, findIncome } from './demographics';
import { Clause, NON_AUDIENCE, asksAboutAudience, readClauses } from './discourse';
import { extractFirmographics } from './firmographics';
import { extractGeo, mentionsPlace } from './geography';
import { findActivityIndustries } from './industry-activities';
import { interestLabel } from './interest-taxonomy';
import { findTaxonomyInterests, labelsFor } from './interests';
import { ClauseAccount, accountLeftovers } from './leftovers';
import { guardCore } from './guard';
import { findExclusions } from './negation';
import { analyse } from './nlp';
import { SemanticCore } from './persona-schema';
import { findPlanAsks } from './plan-asks';
import { findNegativeKeywords, findTopics, headTopics } from './topics';
import { Brief, uniq } from './text';

export interface ExtractedPersona {
  name: string;
  nlDescription: string;
  semanticCore: SemanticCore;
  confidence: Record<string, number>;
}

export interface PersonaExtractor {
  readonly method: string;
  readonly engineVersion: string;
  extract(brief: string): ExtractedPersona;
}

export const RULE_EXTRACTOR_METHOD = 'rules';
export const RULE_ENGINE_VERSION = 'persona-rules/1.3.0';

const NAME_MAX = 80;

/** First sentence of the brief, cut at a word boundary to fit 80 characters. */
export function personaName(brief: string): string {
  const first = (brief.split(/(?<=[.!?;])\s|\n/)[0] ?? '').replace(/[\s.;:!?,]+$/, '').trim();
  if (!first) return 'Untitled persona';
  if (first.length <= NAME_MAX) return first;
  const cut = first.slice(0, NAME_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > 40 ? cut.slice(0, space) : cut).replace(/[\s,;:-]+$/, '')}\u2026`;
}

// Order matters: each step claims the words it used so later steps cannot
// reuse them. Negatives, exclusions and unmappable asks go first because
// their words ("excluding London", "our CRM") must not become targets; then
// every clause that is not about the audience (the client, the product, the
// creative, the media plan) is claimed whole, so only audience clauses give
// targeting.
export function extractPersona(brief: string): ExtractedPersona {
  return explainExtraction(brief).persona;
}

/** The persona, what each clause of the brief is about, and how each was accounted for. */
export function explainExtraction(brief: string): { persona: ExtractedPersona; text: string; roles: Clause[]; clauses: ClauseAccount[] } {
  const raw = typeof brief === 'string' ? brief : '';
  const b = new Brief(raw);
  const analysis = analyse(b.text);
  const negatives = findNegativeKeywords(b);
  const keptAges = findExcludedAges(b);
  const clauses = readClauses(b.text, analysis, { isPlace: mentionsPlace });
  const excluded = findExclusions(b, analysis, clauses);
  const planAsks = findPlanAsks(b, clauses, excluded.dayparts);
  // An ask no field holds is reported even from a clause about something else
  // when that clause names people ("can we build a persona off everyone who
  // abandoned a basket ..."); it is claimed, so it never becomes targeting.
  claimNonAudience(b, clauses, (c) => !asksAboutAudience(analysis, c));
  const constraints = findUnresolved(b);
  claimNonAudience(b, clauses);
  const ages = findAges(b);
  ages.bands.push(...keptAges);
  const gender = findGender(b, excluded.genders);
  const income = findIncome(b);
  const activities = findActivityIndustries(b);
  const named = findTaxonomyInterests(b, analysis, true);
  const topics = findTopics(b);
  const geo = extractGeo(b, topics);
  for (const t of topics) b.claim(t);
  const firmo = extractFirmographics(b);
  firmo.sicCodes = uniq([...firmo.sicCodes, ...activities.sicCodes]);
  firmo.industries = uniq([...firmo.industries, ...activities.industries]);
  const head = headTopics(b, clauses);
  const loose = findTaxonomyInterests(b, analysis, false);
  const age = combineAges(ages.bands, excluded.ageBands, ages.problems);

  const phrases = [...head.interests, ...topics.filter((t) => t.kind === 'interest').flatMap((t) => t.items)];
  const intentTopics = uniq([...head.intents, ...topics.filter((t) => t.kind === 'intent').flatMap((t) => t.items)]);
  // Taxonomy labels first (normalised), then the brief's own words where they say more.
  const hits = [...named, ...loose];
  const labelled = labelsFor([...phrases, ...intentTopics]);
  const nodes = uniq([...hits.map((h) => h.node), ...labelled.nodes]);
  const interests = uniqCaseless([...phrases, ...nodes.map(interestLabel), ...hits.map((h) => h.surface.toLowerCase())]).filter(
    (x) => !/^(?:go|goes|listen|listens|shop|shops|subscribe|invest|bet)\s+(?:to|at|for|in|on)$/i.test(x),
  );
  const exclusions = uniq(excluded.exclusions);
  const leftovers = accountLeftovers(b, analysis, [...interests, ...intentTopics], clauses);
  const unresolved = uniq([
    ...planAsks,
    ...constraints.unresolved,
    ...leftovers.unresolved,
    ...age.unresolved,
    ...gender.unresolved,
    ...income.unresolved,
    ...firmo.unresolved,
    ...geo.unresolved,
  ]);

  const found: SemanticCore = {
    geo: {
      countries: geo.countries,
      cities: geo.cities,
      postcodeDistricts: geo.postcodeDistricts,
      tvRegions: geo.tvRegions,
      ...(geo.regions.length ? { regions: geo.regions } : {}),
    },
    demographics: {
      ...(age.ageMin !== undefined ? { ageMin: age.ageMin } : {}),
      ...(age.ageMax !== undefined ? { ageMax: age.ageMax } : {}),
      gender: gender.gender,
      incomeBand: income.incomeBand,
    },
    firmographics: {
      sicCodes: firmo.sicCodes,
      seniority: firmo.seniority,
      companySize: firmo.companySize,
      ...(firmo.industries.length ? { industries: firmo.industries } : {}),
    },
    intentTopics,
    interests,
    ...(nodes.length ? { interestTaxonomy: nodes.map((n) => ({ key: n.key, iabId: n.iabId, name: n.name })) } : {}),
    exclusions,
    ...(negatives.length ? { searchNegativeKeywords: negatives } : {}),
    ...(unresolved.length ? { unresolvedConstraints: unresolved } : {}),
  };

  // The rules' answer passes the same safety checks as a model's (guard.ts).
  const semanticCore = guardCore(found, { text: b.text, roles: clauses, core: found });
  const confidence: Record<string, number> = { ...geo.confidence, ...firmo.confidence };
  if (age.ageMin !== undefined && age.confidence !== undefined) confidence['demographics.ageMin'] = age.confidence;
  if (age.ageMax !== undefined && age.confidence !== undefined) confidence['demographics.ageMax'] = age.confidence;
  if (gender.gender !== 'any' && gender.confidence !== undefined) confidence['demographics.gender'] = gender.confidence;
  if (income.incomeBand !== 'any' && income.confidence !== undefined) confidence['demographics.incomeBand'] = income.confidence;
  if (interests.length) confidence['interests'] = 0.7;
  if (intentTopics.length) confidence['intentTopics'] = 0.75;
  if (exclusions.length) confidence['exclusions'] = 0.85;
  if (negatives.length) confidence['searchNegativeKeywords'] = 0.95;
  if (unresolved.length) confidence['unresolvedConstraints'] = 0.9;

  return {
    persona: { name: personaName(b.text), nlDescription: raw.trim(), semanticCore, confidence },
    text: b.text,
    roles: clauses,
    clauses: leftovers.clauses,
  };
}

/** Claim every clause that is not about the audience, and an advertiser named as a subject ("Redline want ..."). */
function claimNonAudience(b: Brief, clauses: readonly Clause[], only: (c: Clause) => boolean = () => true): void {
  for (const c of clauses) {
    if (!only(c)) continue;
    if (NON_AUDIENCE.has(c.role)) b.claim(c);
    if (c.advertiser) b.claim(c.advertiser);
  }
}

function uniqCaseless(xs: readonly string[]): string[] {
  const seen = new Set<string>();
  return xs.filter((x) => !seen.has(x.toLowerCase()) && seen.add(x.toLowerCase()));
}

export function createRuleExtractor(): PersonaExtractor {
  return {
    method: RULE_EXTRACTOR_METHOD,
    engineVersion: RULE_ENGINE_VERSION,
    extract: extractPersona,
  };
}
