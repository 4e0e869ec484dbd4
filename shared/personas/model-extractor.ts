import { z } from 'zod';
import { type ChatSettings, completeAsJson } from '../net/chat-completions';
import { AGE_CEILING, AGE_FLOOR, COMPANY_SIZES, GENDERS, INCOME_BANDS, SENIORITIES, SemanticCore } from './persona-schema';

export const MODEL_EXTRACTOR_METHOD = 'model';
export const MODEL_ENGINE_VERSION = 'persona-model/1.0.0';

const strings = z.array(z.string().min(1).max(200)).max(50);
const age = z.number().int().min(AGE_FLOOR).max(AGE_CEILING).nullable();

// The semantic core as the model must answer it: the persona schema's fields and enums, every key
// present (strict structured output wants all properties required, no others), an unstated age null.
const ModelAnswerSchema = z.strictObject({
  geo: z.strictObject({ countries: strings, cities: strings, postcodeDistricts: strings, tvRegions: strings }),
  demographics: z.strictObject({ ageMin: age, ageMax: age, gender: z.enum(GENDERS), incomeBand: z.enum(INCOME_BANDS) }),
  firmographics: z.strictObject({
    sicCodes: z.array(z.string().regex(/^\d{5}$/)).max(50),
    seniority: z.array(z.enum(SENIORITIES)),
    companySize: z.enum(COMPANY_SIZES),
  }),
  intentTopics: strings,
  interests: strings,
  exclusions: strings,
  searchNegativeKeywords: strings,
  unresolvedConstraints: strings,
});

const INSTRUCTIONS = [
  'Turn the advertising brief into the audience persona it describes, as JSON in the given schema.',
  'Only the audience counts: sentences about the client, product, creative, tone, budget, dates or channels give nothing.',
  'What the brief rules out goes in exclusions (search terms to avoid in searchNegativeKeywords), never in a targeting field.',
  'Countries are ISO 3166-1 alpha-2 (UK is GB, also the default); cities by English name; tvRegions only when the brief',
  'says TV region or names an ITV/STV franchise; sicCodes are UK SIC 2007 five-digit subclasses as narrow as the brief.',
  'Ages: "under 30" is ageMax 29, "over 55s" ageMin 55, unstated null. Gender, income and company size default to any.',
  'Seniority: founders, owners, partners, C-suite are c-suite; heads of and directors director; managers manager; practitioners ic.',
  'An ask about the audience or placement no field holds (a first-party list, dayparting, a radius) goes in unresolvedConstraints.',
].join(' ');

/** The model's reading of the brief; throws ChatUnavailable when there is no usable one. */
export async function askModel(settings: ChatSettings, brief: string): Promise<SemanticCore> {
  const messages = [
    { role: 'system' as const, content: INSTRUCTIONS },
    { role: 'user' as const, content: brief },
  ];
  const a = await completeAsJson(settings, messages, 'persona_semantic_core', ModelAnswerSchema);
  const { ageMin, ageMax, ...demographics } = a.demographics;
  return {
    ...a,
    demographics: { ...(ageMin !== null ? { ageMin } : {}), ...(ageMax !== null ? { ageMax } : {}), ...demographics },
    searchNegativeKeywords: a.searchNegativeKeywords.length ? a.searchNegativeKeywords : undefined,
    unresolvedConstraints: a.unresolvedConstraints.length ? a.unresolvedConstraints : undefined,
  };
}
