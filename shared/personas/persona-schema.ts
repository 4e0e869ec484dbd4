import { z } from 'zod';

// Persona as the spec's "Persona" table describes it. semanticCore and its
// sub-objects are loose: the extractor (and later versions of it) may carry
// extra detail such as geo.regions or firmographics.industries.

export const GENDERS = ['any', 'male', 'female'] as const;
export const INCOME_BANDS = ['any', 'mid', 'high'] as const;
export const SENIORITIES = ['c-suite', 'vp', 'director', 'manager', 'ic'] as const;
export const COMPANY_SIZES = ['any', 'smb', 'mid', 'enterprise'] as const;

export const AGE_FLOOR = 16;
export const AGE_CEILING = 99;

const nonEmpty = z.string().min(1);
const age = z.number().int().min(AGE_FLOOR).max(AGE_CEILING);

export const GeoSchema = z.looseObject({
  countries: z.array(z.string()).default(['GB']),
  cities: z.array(z.string()).default([]),
  postcodeDistricts: z.array(z.string()).default([]),
  tvRegions: z.array(z.string()).default([]),
});

export const DemographicsSchema = z.looseObject({
  ageMin: age.optional(),
  ageMax: age.optional(),
  gender: z.enum(GENDERS).default('any'),
  incomeBand: z.enum(INCOME_BANDS).default('any'),
});

export const FirmographicsSchema = z.looseObject({
  sicCodes: z.array(z.string()).default([]),
  seniority: z.array(z.enum(SENIORITIES)).default([]),
  companySize: z.enum(COMPANY_SIZES).default('any'),
});

export const SemanticCoreSchema = z.looseObject({
  geo: GeoSchema,
  // The spec marks only geo as required; the others default to empty objects
  // so a stored persona always reads with its defaults filled in.
  demographics: DemographicsSchema.default(() => DemographicsSchema.parse({})),
  firmographics: FirmographicsSchema.default(() => FirmographicsSchema.parse({})),
  intentTopics: z.array(z.string()).default([]),
  interests: z.array(z.string()).default([]),
  exclusions: z.array(z.string()).default([]),
  searchNegativeKeywords: z.array(nonEmpty).optional(),
  unresolvedConstraints: z.array(nonEmpty).optional(),
});

export const ConfidenceSchema = z.record(z.string(), z.number().min(0).max(1));

export const PersonaSchema = z.object({
  id: z.string(),
  version: z.number().int().min(1).default(1),
  name: z.string(),
  nlDescription: z.string(),
  semanticCore: SemanticCoreSchema,
  confidence: ConfidenceSchema.default({}),
  createdAt: z.iso.datetime().optional(),
});

// What extraction produces before storage adds id, version and createdAt.
export const ExtractedPersonaSchema = PersonaSchema.omit({ id: true, version: true, createdAt: true });

export type Gender = (typeof GENDERS)[number];
export type IncomeBand = (typeof INCOME_BANDS)[number];
export type Seniority = (typeof SENIORITIES)[number];
export type CompanySize = (typeof COMPANY_SIZES)[number];
export type Geo = z.infer<typeof GeoSchema>;
export type SemanticCore = z.infer<typeof SemanticCoreSchema>;
export type Persona = z.infer<typeof PersonaSchema>;
