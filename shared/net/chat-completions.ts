import { z } from 'zod';

/** An OpenAI-compatible chat-completions service (its `/chat/completions` under `baseUrl`). */
export interface ChatSettings {
  baseUrl: string;
  model: string;
  /** Sent as a bearer token, nowhere else. */
  apiKey?: string;
  timeoutMs: number;
}

/** Why no usable answer came. */
export const CHAT_FAILURES = ['timeout', 'unreachable', 'http_error', 'not_json', 'outside_schema'] as const;
export type ChatFailure = (typeof CHAT_FAILURES)[number];

export class ChatUnavailable extends Error {
  constructor(readonly reason: ChatFailure) {
    super(`chat completion unusable: ${reason}`);
  }
}

const CompletionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable().optional() }) })).min(1),
});

/**
 * One completion with structured output: `schema`'s JSON Schema goes as `response_format`, and the
 * answer must parse with `schema` (a service may ignore the format, so it is checked here too).
 */
export async function completeAsJson<T>(
  settings: ChatSettings,
  messages: ReadonlyArray<{ role: 'system' | 'user'; content: string }>,
  name: string,
  schema: z.ZodType<T>,
): Promise<T> {
  const { $schema: _draft, ...jsonSchema } = z.toJSONSchema(schema, { target: 'draft-7' });
  void _draft;
  const signal = AbortSignal.timeout(settings.timeoutMs);
  let text: string;
  try {
    const res = await fetch(`${settings.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      signal,
      headers: { 'content-type': 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
      body: JSON.stringify({
        model: settings.model,
        temperature: 0,
        messages,
        response_format: { type: 'json_schema', json_schema: { name, strict: true, schema: jsonSchema } },
      }),
    });
    text = await res.text();
    if (!res.ok) throw new ChatUnavailable('http_error');
  } catch (err) {
    if (err instanceof ChatUnavailable) throw err;
    throw new ChatUnavailable(signal.aborted ? 'timeout' : 'unreachable');
  }
  const completion = CompletionSchema.safeParse(parseJson(text));
  if (!completion.success) throw new ChatUnavailable(parseJson(text) === undefined ? 'not_json' : 'outside_schema');
  const content = parseJson(completion.data.choices[0]!.message.content ?? '');
  if (content === undefined) throw new ChatUnavailable('not_json');
  const answer = schema.safeParse(content);
  if (!answer.success) throw new ChatUnavailable('outside_schema');
  return answer.data;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
