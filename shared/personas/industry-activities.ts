import { Brief } from './text';

// Industries described by what a business does rather than by a sector label:
// "firms that build houses" (41), "companies that make furniture" (31),
// "shops that sell clothes" (47), "businesses that sell online" (47.91).
// Codes are UK SIC 2007 subclasses.

const ACTIVITIES: readonly { verb: RegExp; object: RegExp; label: string; codes: string[] }[] = [
  { verb: /build/, object: /\b(?:houses|homes|housing|flats)\b/, label: 'housebuilding', codes: ['41202'] },
  { verb: /build/, object: /\b(?:roads|bridges|railways)\b/, label: 'civil engineering', codes: ['42110'] },
  { verb: /make|produce|manufacture/, object: /\bfurniture\b/, label: 'furniture manufacturing', codes: ['31090'] },
  { verb: /make|produce|manufacture/, object: /\bfood and drinks?\b/, label: 'food and drink manufacturing', codes: ['10890', '11070'] },
  { verb: /make|produce|manufacture/, object: /\bfood\b/, label: 'food manufacturing', codes: ['10890'] },
  { verb: /make|produce|manufacture|brew/, object: /\b(?:drinks?|beer|spirits)\b/, label: 'drinks manufacturing', codes: ['11070'] },
  { verb: /make|produce|manufacture/, object: /\b(?:clothes|clothing|garments)\b/, label: 'clothing manufacturing', codes: ['14190'] },
  { verb: /make|produce|manufacture/, object: /\bcars\b/, label: 'motor vehicle manufacturing', codes: ['29100'] },
  { verb: /write|develop|build|make/, object: /\b(?:software|apps)\b/, label: 'software', codes: ['62012'] },
  { verb: /sell/, object: /\b(?:online|on the internet|through (?:a|their) website)\b/, label: 'online retail', codes: ['47910'] },
  { verb: /sell/, object: /\b(?:clothes|clothing|fashion)\b/, label: 'clothing retail', codes: ['47710'] },
  { verb: /sell/, object: /\b(?:food|groceries)\b/, label: 'grocery retail', codes: ['47110'] },
  { verb: /sell/, object: /\bcars\b/, label: 'car sales', codes: ['45111'] },
  { verb: /repair|fix|service/, object: /\bcars\b/, label: 'car repair', codes: ['45200'] },
  {
    verb: /move|carry|deliver|haul|transport/,
    object: /\b(?:goods|freight|parcels|by lorry|by road)\b/,
    label: 'road freight',
    codes: ['49410'],
  },
  { verb: /grow/, object: /\b(?:crops|vegetables|fruit)\b/, label: 'crop growing', codes: ['01130'] },
];
const CLAUSE =
  /\b(?:companies|company|firms|firm|businesses|business|shops|stores|manufacturers|makers|outfits)\s+((?:that|which|who)\s+([a-z]+?)(?:s|es)?\s+([^,.;\u0000]{1,40}))/g;

export interface ActivityIndustries {
  sicCodes: string[];
  industries: string[];
}

/** Find and claim industries named by activity. */
export function findActivityIndustries(b: Brief): ActivityIndustries {
  const out: ActivityIndustries = { sicCodes: [], industries: [] };
  for (const h of b.find(CLAUSE)) {
    const [, verb, rest] = h.groups as [string, string, string];
    const hit = ACTIVITIES.find((a) => a.verb.test(verb) && a.object.test(rest));
    const clause = h.groupSpans[0];
    if (!hit || !clause) continue;
    out.sicCodes.push(...hit.codes);
    out.industries.push(hit.label);
    // Claim only "that build houses", so the company noun and any place after stay readable.
    const object = hit.object.exec(rest)!;
    b.claim({ start: clause.start, end: clause.end - rest.length + object.index + object[0].length });
  }
  return out;
}
