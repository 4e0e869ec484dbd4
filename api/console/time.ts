import { esc } from './html';

/**
 * Times as people read them. The console runs no script, so it cannot ask the browser for its
 * zone: times are shown in the zone the viewer chose (`/console/preferences`, kept in the
 * `fd_console_tz` cookie), UTC until they choose, always with the zone named, and inside
 * `<time datetime>` carrying the exact instant.
 */
export const TIME_ZONE_COOKIE = 'fd_console_tz';
export const TIME_ZONES: readonly string[] = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
const KNOWN = new Set(TIME_ZONES);

export const timeZoneOr = (zone: string | undefined): string => {
  const decoded = zone ? safeDecode(zone) : undefined;
  return decoded && KNOWN.has(decoded) ? decoded : 'UTC';
};

function safeDecode(v: string): string | undefined {
  try {
    return decodeURIComponent(v);
  } catch {
    return undefined;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();
function formatIn(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      day: 'numeric',
      month: 'short',
      year: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
    });
    formats.set(zone, f);
  }
  return f;
}

/** `<time datetime>` with the instant in the viewer's zone, the zone named ("24 Nov 2026, 14:05 UTC"). */
export function at(iso: unknown, zone: string): string {
  if (typeof iso !== 'string' || Number.isNaN(Date.parse(iso))) return '—';
  return `<time datetime="${esc(iso)}">${esc(formatIn(zone).format(new Date(iso)))}</time>`;
}

/** A duration in words a person scans: "2 d 3 h", "3 h 10 min", "12 min", "under a minute". */
export function span(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes < 1) return 'under a minute';
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  if (d) return h ? `${d} d ${h} h` : `${d} d`;
  if (h) return m ? `${h} h ${m} min` : `${h} h`;
  return `${m} min`;
}

/** Where a due time stands now: "overdue by 3 h 10 min" or "due in 40 min". */
export function dueWords(iso: string, now = Date.now()): { overdue: boolean; words: string } {
  const left = Date.parse(iso) - now;
  return left < 0 ? { overdue: true, words: `overdue by ${span(left)}` } : { overdue: false, words: `due in ${span(left)}` };
}
