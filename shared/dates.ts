/** Calendar days as the service keeps them: UTC, `YYYY-MM-DD`. */

const DAY_MS = 86_400_000;

/** A day as `YYYY-MM-DD`, from a DATE column (read as text) or a moment (its UTC day). */
export const dateOnly = (d: string | Date): string => (typeof d === 'string' ? d.slice(0, 10) : d.toISOString().slice(0, 10));

/** The day `days` after `day` (before it, when negative). */
export const addDays = (day: string, days: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** Whole days from `from` to `to` (0 for the same day; negative when `to` is earlier). */
export const daysFrom = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
