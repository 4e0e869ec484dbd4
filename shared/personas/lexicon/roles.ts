import type { CompanySize, Seniority } from '../persona-schema';

// Job-title and company-size wording (README conventions), as regex sources
// over lower-case text.

const BUSINESS_KINDS =
  'business|businesses|company|companies|firm|firms|shop|store|restaurant|practice|agency|salon|cafe|café|hotel|pub|bar|' +
  'franchise|startup|start-up|sme|smb|farm|garage|studio|gym|brand|ecommerce|e-commerce|retail|nursery|clinic|dental|' +
  'construction|building|trade|design|marketing|consultancy|property|landlord|b&b|dealership|brewery|factory';
const ORG_PLURALS =
  'businesses|companies|firms|shops|stores|restaurants|practices|agencies|salons|hotels|pubs|smes|smbs|startups|start-ups|brands|cafes|gyms|farms|clinics|garages|studios';

export const SENIORITY_PATTERNS: readonly { level: Seniority; pattern: string }[] = [
  { level: 'c-suite', pattern: 'c[- ]?suite|c[- ]?level|cxos?|(?:ceo|cfo|cto|cmo|coo|cio|ciso|cro|cpo|cdo|chro|cso|cco|cno|cco)s?' },
  { level: 'c-suite', pattern: 'chief\\s+(?:[a-z&-]+\\s+){0,4}?officers?|chief executives?' },
  {
    level: 'c-suite',
    pattern:
      '(?:co-?)?founders?|(?<!vice[- ])presidents?|chair(?:man|men|woman|women|person|persons)|managing directors?|non-executive directors?|board (?:members|directors)|proprietors?|owner[- ]managers?|owner[- ]operators?',
  },
  { level: 'c-suite', pattern: `(?:${BUSINESS_KINDS})\\s+owners?` },
  { level: 'c-suite', pattern: `owners?\\s+of\\s+(?:[a-z&-]+\\s+){0,3}?(?:${ORG_PLURALS})` },
  {
    level: 'c-suite',
    pattern: '(?:law|legal|accounting|accountancy|consulting|consultancy|audit|equity|managing|senior|salaried|firm|practice)\\s+partners?',
  },
  {
    level: 'c-suite',
    pattern: 'partners?\\s+(?:at|in|of)\\s+(?:[a-z&-]+\\s+){0,3}?(?:firms?|practices?|companies|partnerships?|llps?|agencies)',
  },
  { level: 'vp', pattern: '(?:s|e)?vps?|vice[- ]presidents?' },
  {
    level: 'director',
    pattern:
      '(?<!managing |non-executive |board |funeral |film |musical )directors?|heads?\\s+of(?=\\s+(?!household|state|hair|cattle|the family)[a-z])|department heads|directorate',
  },
  { level: 'manager', pattern: 'managers?|team[- ](?:leads?|leaders?)|supervisors?|line managers?' },
  {
    level: 'ic',
    pattern:
      'engineers?|developers?|programmers?|coders?|analysts?|data scientists?|scientists?|designers?|architects?|specialists?|' +
      'technicians?|practitioners?|individual contributors?|ics|testers?|researchers?',
  },
];

// Words that make a title senior even when an IC word follows ("lead" and
// "senior" do not: a senior engineer is still an individual contributor).
export const SENIOR_QUALIFIERS = /\b(?:head|chief|director|vp|vice president)\s+(?:of\s+)?$/;

// Function words planners put before a title ("finance directors", "IT
// managers"); claimed with the title so they are not read as interests.
export const FUNCTION_WORDS = new Set(
  (
    'finance financial marketing it data engineering software sales hr people operations ops procurement purchasing product ' +
    'technology tech digital ecommerce e-commerce brand creative design security information cyber cybersecurity legal ' +
    'compliance risk supply chain logistics facilities office customer success service account communications comms content ' +
    'growth revenue strategy innovation research analytics network cloud devops platform infrastructure systems commercial ' +
    'property estates store site project programme general senior junior lead principal staff retail practice clinical ' +
    'medical nursing school hotel restaurant category trade media training learning talent recruitment payroll treasury tax ' +
    'audit sustainability esg energy fleet transport warehouse plant production manufacturing quality safety regional area ' +
    'country national global insight insights performance paid social search seo ppc crm web mobile backend frontend ' +
    'full-stack fullstack qa test machine ai ml business technical solutions pre-sales presales partnerships affiliate ' +
    'events fundraising investment investor relations pr public relations ux ui art editorial executive marketing-ops it-security'
  ).split(' '),
);

export const SIZE_PATTERNS: readonly { size: Exclude<CompanySize, 'any'>; pattern: string }[] = [
  {
    size: 'smb',
    pattern:
      'small (?:and|to) (?:medium|mid)[- ]sized (?:businesses|companies|enterprises|firms)|small (?:and|to) medium (?:businesses|companies|enterprises|firms)|' +
      "small (?:[a-z&-]+ )?(?:business(?:es)?|firms?|compan(?:y|ies)|enterprises|organi[sz]ations|brands|retailers|employers)|smbs?|smes?|sme's|" +
      'start[- ]?ups?|micro[- ]?(?:businesses|enterprises|firms)|sole traders?|owner[- ]managed',
  },
  {
    size: 'mid',
    pattern: 'mid[- ]?market|mid[- ]?sized?|medium[- ]sized?|mid[- ]tier|medium (?:businesses|companies|enterprises|firms)',
  },
  {
    size: 'enterprise',
    pattern:
      'enterprises?|enterprise[- ]level|large (?:[a-z&-]+ ){0,2}?(?:companies|corporates|corporations|enterprises|businesses|firms|organi[sz]ations|employers|brands|retailers)|' +
      'big (?:companies|corporates|businesses|firms|brands)|corporates|multinationals?|blue[- ]chips?|ftse ?(?:100|250|350|all[- ]share)|' +
      'fortune ?(?:1000|500|100)|(?:forbes )?global 2000|s&p 500|large[- ]cap',
  },
];

export const EMPLOYEE_WORDS = '(?:employees|staff|people|workers|headcount|ftes?|members of staff)';

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
