import { z } from 'zod';

/**
 * The optional model-backed persona extractor (docs/personas.md, "Model-backed extraction"): any
 * OpenAI-compatible chat-completions service with structured output. Off unless both the base URL
 * and the model are set; the embedded rules stay the default and the fallback.
 */
export const personaModelConfig = {
  /** e.g. https://api.openai.com/v1 (the service's `/chat/completions` is called under it). */
  PERSONA_MODEL_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  PERSONA_MODEL_NAME: z.string().min(1).max(200).optional(),
  /** Sent as a bearer token; never logged. Unset for a service that needs none. */
  PERSONA_MODEL_API_KEY: z.string().min(1).max(4096).optional(),
  /** Past this, the rules answer instead; keep it well under PERSONA_EXTRACT_TIMEOUT_MS. */
  PERSONA_MODEL_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(4_000),
};
