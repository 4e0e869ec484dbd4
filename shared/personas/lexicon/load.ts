import { z } from 'zod';

// Word lists are data (JSON next to the code that reads them) so a planner
// can add a word without touching code. Each is checked once, when its module
// loads: a malformed file stops the process at start, not a brief later.

export function parseLexicon<S extends z.ZodType>(file: string, schema: S, data: unknown): z.infer<S> {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new Error(`lexicon ${file} is malformed: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** A list of lower-case words or phrases, each non-empty. */
export const WordList = z.array(
  z
    .string()
    .min(1)
    .refine((w) => w === w.trim() && w === w.toLowerCase(), 'words are trimmed and lower case'),
);

/** A regular-expression source that compiles. */
export const RegexSource = z.string().refine((s) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
}, 'not a valid regular expression');

/** ISO 3166-1 alpha-2 country code. */
export const CountryCode = z.string().regex(/^[A-Z]{2}$/);
