import { z } from 'zod';
import raw from './industries.json';
import { WordList, parseLexicon } from './load';
import sic from './sic-2007.json';

// Industry words -> UK SIC 2007 subclass codes (industries.json). Every code's
// division (its first two digits) must be a division of the ONS table in
// sic-2007.json: a typo stops the process at start instead of targeting a
// sector that does not exist.

const Sic = z.object({
  source: z.string(),
  note: z.string(),
  sections: z.array(
    z.object({
      code: z.string().regex(/^[A-U]$/),
      title: z.string().min(1),
      divisions: z.array(z.object({ code: z.string().regex(/^\d{2}$/), title: z.string().min(1) })),
    }),
  ),
});
const SIC = parseLexicon('sic-2007.json', Sic, sic);

/** Two-digit UK SIC 2007 division -> its section letter. */
export const SIC_DIVISIONS: ReadonlyMap<string, string> = new Map(SIC.sections.flatMap((s) => s.divisions.map((d) => [d.code, s.code])));

const Code = z
  .string()
  .regex(/^\d{5}$/, 'a five-digit SIC 2007 subclass')
  .refine((c) => SIC_DIVISIONS.has(c.slice(0, 2)), 'its first two digits are not a SIC 2007 division');
const Industries = z.object({
  about: z.string(),
  industries: z.array(
    z.object({
      label: z.string().min(1),
      terms: WordList,
      orgs: z.array(z.union([z.string().min(1), z.object({ name: z.string().min(1), codes: z.array(Code).min(1) })])),
      codes: z.array(Code).min(1),
    }),
  ),
  companyNouns: WordList,
  consumerAfter: WordList,
});
const I = parseLexicon('industries.json', Industries, raw);

export interface IndustryEntry {
  label: string;
  terms: readonly string[];
  /** Organisation nouns; a tuple carries its own narrower codes ("banks" are 64.19, not all of finance). */
  orgs: readonly (string | readonly [string, readonly string[]])[];
  codes: readonly string[];
}

export const INDUSTRIES: readonly IndustryEntry[] = I.industries.map((e) => ({
  label: e.label,
  terms: e.terms,
  orgs: e.orgs.map((o) => (typeof o === 'string' ? o : ([o.name, o.codes] as const))),
  codes: e.codes,
}));

/** Nouns that, after a sector word, make it an industry reference. */
export const COMPANY_NOUNS: readonly string[] = I.companyNouns;

/** After an organisation noun these make it a consumer audience ("hotel guests"). */
export const CONSUMER_AFTER: readonly string[] = I.consumerAfter;
