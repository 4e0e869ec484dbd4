import { z } from 'zod';
import type { CompanySize, Seniority } from '../persona-schema';
import { RegexSource, WordList, parseLexicon } from './load';
import raw from './roles.json';

// Job-title and company-size wording (roles.json, README conventions), as
// regex sources over lower-case text.

const Roles = z.object({
  about: z.string(),
  businessKinds: WordList,
  orgPlurals: WordList,
  seniority: z.array(z.object({ level: z.enum(['c-suite', 'vp', 'director', 'manager', 'ic']), pattern: z.string().min(1) })),
  seniorQualifiers: WordList,
  functionWords: WordList,
  sizes: z.array(z.object({ size: z.enum(['smb', 'mid', 'enterprise']), pattern: z.string().min(1) })),
  employeeWords: WordList,
});
const R = parseLexicon('roles.json', Roles, raw);
const alt = (words: readonly string[]): string => `(?:${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`;

const expand = (pattern: string): string =>
  RegexSource.parse(pattern.replaceAll('{businessKinds}', alt(R.businessKinds)).replaceAll('{orgPlurals}', alt(R.orgPlurals)));

export const SENIORITY_PATTERNS: readonly { level: Seniority; pattern: string }[] = R.seniority.map((s) => ({
  level: s.level,
  pattern: expand(s.pattern),
}));

/** Words that make a title senior even when an IC word follows ("lead" and "senior" do not). */
export const SENIOR_QUALIFIERS = new RegExp(`\\b${alt(R.seniorQualifiers)}\\s+(?:of\\s+)?$`);

/** Function words planners put before a title ("finance directors"); claimed with the title. */
export const FUNCTION_WORDS: ReadonlySet<string> = new Set(R.functionWords);

export const SIZE_PATTERNS: readonly { size: Exclude<CompanySize, 'any'>; pattern: string }[] = R.sizes.map((s) => ({
  size: s.size,
  pattern: expand(s.pattern),
}));

export const EMPLOYEE_WORDS = alt(R.employeeWords);

// UK Companies Act size classes: small < 50 employees, medium 50-249,
// large 250+. An SME ("up to 250") counts as smb per the README.
export function sizeForEmployees(min: number | null, max: number | null): Exclude<CompanySize, 'any'> | null {
  if (min !== null && min >= 250) return 'enterprise';
  if (min !== null && max !== null) {
    if (max <= 50) return 'smb';
    if (min >= 50 && max <= 250) return 'mid';
    return null;
  }
  if (max !== null) return max <= 250 ? 'smb' : null;
  return null;
}
