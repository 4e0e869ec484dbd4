import { isValid, toOutcode, validOutcode } from 'postcode';
import { POSTCODE_AREAS, validLetterDistrict } from './lexicon/regions';
import { lowerCaseWriting } from './segments';
import { Brief, Hit, uniq } from './text';

// UK postcode districts (outward codes) such as M1, EC2A, N1, SW1A. The shape
// of an outward code and of a full postcode is the postcode library's
// (ideal-postcodes); the areas and letter districts that exist are ours
// (lexicon/regions.json). Shapes like "B2B", "CO2" or "the M25" look like
// districts, so a candidate needs a real area, a valid shape and some sign
// that postcodes are meant.

const TOKEN = /(?<![A-Za-z0-9£$€-])([A-Z]{1,2}\d[A-Z\d]?)(\s\d[A-Z]{2})?(?![A-Za-z0-9%])/g;
const DISTRICT = /^([A-Z]{1,2})(\d{1,2})([A-Z])?$/;
const RANGE_GAP = /^\s*(?:-|to|through|thru)\s*$/i;
const SHORT_RANGE = /^\s*(?:-|to)\s*(\d{1,2})(?![A-Za-z0-9%])/;
const POSTCODE_WORDS = /\b(?:post ?codes?|postal (?:districts?|codes?|areas?)|districts?|outward codes?|postcode areas?)\b/i;
const CUE_BEFORE = /\b(?:in|around|near|across|covering|within|and|or)\s*$|,\s*$/i;
const NOT_POSTCODE_AFTER = /^\s*(?:motorway|corridor|junction|j\d|chip|pro|max|ultra|emissions?|levels?|vitamins?|\+)/i;

interface Candidate {
  hit: Hit;
  area: string;
  num: number;
  district: string;
}

/** The district a token names ("M1", or "M1" from "M1 1AE"), if it is a real one. */
function district(outward: string, inward: string | undefined): { area: string; num: string; district: string } | null {
  const code = inward && isValid(`${outward}${inward}`) ? toOutcode(`${outward}${inward}`) : outward;
  if (!code || !validOutcode(code)) return null;
  const parts = DISTRICT.exec(code);
  if (!parts) return null;
  const [, area, num, letter] = parts as unknown as [string, string, string, string | undefined];
  if (!POSTCODE_AREAS.has(area)) return null;
  if (letter && !validLetterDistrict(code)) return null;
  if (num.length === 2 && num.startsWith('0')) return null;
  return { area, num, district: code };
}

export function extractPostcodes(b: Brief): string[] {
  const text = b.text;
  const cands: Candidate[] = [];
  // A brief typed in lower case writes its postcodes so too ("ls6, ls4").
  const hay = lowerCaseWriting(text) ? b.caseView.toUpperCase() : b.caseView;
  for (const h of b.findOn(hay, TOKEN)) {
    const found = district(h.groups[0]!, h.groups[1]);
    if (!found) continue;
    const { area, num } = found;
    const after = text.slice(h.end, h.end + 20);
    const before = text.slice(Math.max(0, h.start - 6), h.start);
    if (NOT_POSTCODE_AFTER.test(after)) continue;
    if (area === 'M' && /\bthe\s+$/i.test(before)) continue;
    cands.push({ hit: h, area, num: Number(num), district: found.district });
  }
  if (!cands.length) return [];

  const stated = POSTCODE_WORDS.test(b.text);
  const out: string[] = [];
  cands.forEach((c, i) => {
    const before = text.slice(Math.max(0, c.hit.start - 30), c.hit.start);
    const afterCity = /[A-Z][a-z]+\s+$/.test(before) && !/\b(?:the|and|or|in)\s+$/i.test(before);
    if (!(stated || cands.length > 1 || CUE_BEFORE.test(before) || afterCity)) return;
    out.push(c.district);
    b.claim(c.hit);
    // "LS1 to LS6" and "LS1-6" name every district in between.
    const next = cands[i + 1];
    if (
      next &&
      next.area === c.area &&
      RANGE_GAP.test(text.slice(c.hit.end, next.hit.start)) &&
      next.num > c.num &&
      next.num - c.num <= 30
    ) {
      for (let n = c.num + 1; n < next.num; n++) out.push(`${c.area}${n}`);
      b.claim({ start: c.hit.end, end: next.hit.start });
      return;
    }
    const short = SHORT_RANGE.exec(text.slice(c.hit.end));
    const to = short ? Number(short[1]) : 0;
    if (short && to > c.num && to - c.num <= 30) {
      for (let n = c.num + 1; n <= to; n++) out.push(`${c.area}${n}`);
      b.claim({ start: c.hit.end, end: c.hit.end + short[0].length });
    }
  });
  return uniq(out);
}
