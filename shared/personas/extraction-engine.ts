import { ZodError } from 'zod';
import { type ChatFailure, type ChatSettings, ChatUnavailable } from '../net/chat-completions';
import { ExtractedPersona, RULE_ENGINE_VERSION, RULE_EXTRACTOR_METHOD, explainExtraction } from './extractor';
import { guardCore } from './guard';
import { MODEL_ENGINE_VERSION, MODEL_EXTRACTOR_METHOD, askModel } from './model-extractor';
import { ExtractedPersonaSchema, SemanticCore } from './persona-schema';

export interface Extraction {
  persona: ExtractedPersona;
  method: typeof RULE_EXTRACTOR_METHOD | typeof MODEL_EXTRACTOR_METHOD;
  engineVersion: string;
  /** Set when the model was asked and the rules answered instead, and why. */
  fallback?: { from: typeof MODEL_EXTRACTOR_METHOD; reason: ChatFailure };
}

export interface ExtractionEngine {
  extract(brief: string): Promise<Extraction>;
}

// A model gives no per-field confidence; a field it filled and the guard kept gets this one.
const MODEL_CONFIDENCE = 0.6;

/**
 * The rules, or, when `model` is set, a model-backed extractor with the rules as its fallback. The
 * rules read every brief anyway (in about a millisecond): their reading is the default answer, the
 * fallback, and what the model's answer is checked against (guard.ts); every answer is validated.
 */
export function createExtractionEngine(model?: ChatSettings, onFallback?: (reason: ChatFailure) => void): ExtractionEngine {
  return {
    async extract(brief) {
      const reading = explainExtraction(brief);
      const rules: Extraction = {
        persona: ExtractedPersonaSchema.parse(reading.persona),
        method: RULE_EXTRACTOR_METHOD,
        engineVersion: RULE_ENGINE_VERSION,
      };
      if (!model) return rules;
      try {
        const core = guardCore(await askModel(model, brief), {
          text: reading.text,
          roles: reading.roles,
          core: reading.persona.semanticCore,
        });
        const persona = ExtractedPersonaSchema.parse({ ...reading.persona, semanticCore: core, confidence: filled(core) });
        return { persona, method: MODEL_EXTRACTOR_METHOD, engineVersion: `${MODEL_ENGINE_VERSION} (${model.model})` };
      } catch (err) {
        // A checked answer that still fails the persona schema is outside it too; anything else is a bug.
        const reason = err instanceof ChatUnavailable ? err.reason : err instanceof ZodError ? 'outside_schema' : null;
        if (!reason) throw err;
        onFallback?.(reason);
        return { ...rules, fallback: { from: MODEL_EXTRACTOR_METHOD, reason } };
      }
    },
  };
}

/** One confidence per field the answer filled (an array with entries, an age, a value other than "any"). */
function filled(core: SemanticCore): Record<string, number> {
  const { geo, demographics, firmographics, ...rest } = core;
  const fields = Object.entries({ geo, demographics, firmographics }).flatMap(([group, o]) =>
    Object.entries(o).map(([k, v]) => [`${group}.${k}`, v] as const),
  );
  const has = (v: unknown) => (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== 'any');
  return Object.fromEntries([...fields, ...Object.entries(rest)].filter(([, v]) => has(v)).map(([k]) => [k, MODEL_CONFIDENCE]));
}
