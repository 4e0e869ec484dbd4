import { z } from 'zod';

/** Browser jobs (docs/bookings.md, "Browser jobs"): the browser, and the limits every job runs under. */
export const browserConfig = {
  /** The Chromium the browser worker starts (Debian's `chromium` package). */
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  /** Browser jobs one worker process runs at once: each is a Chromium of its own. */
  BROWSER_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(8).default(1),
  /** How long one job may take, from starting the browser to the evidence stored. */
  BROWSER_JOB_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(60_000),
  /**
   * How long a job may wait queued while no live worker can run it (none has a browser): then it
   * ends failed `browser_unavailable`, saying why, rather than waiting unseen.
   */
  BROWSER_JOB_QUEUE_WAIT_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(24 * 60 * 60 * 1000)
    .default(5 * 60 * 1000),
  /** Bytes the page and everything it loads may bring in, all requests together. */
  BROWSER_JOB_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(10_000)
    .max(500 * 1024 * 1024)
    .default(25 * 1024 * 1024),
  /** Requests the page may make, its own navigation included. */
  BROWSER_JOB_MAX_REQUESTS: z.coerce.number().int().min(1).max(10_000).default(200),
  /**
   * Tests only: the browser may open a loopback address (a supplier site the test serves), and a
   * job's own loopback origin counts as its supplier's site. Refused in production.
   */
  BROWSER_ALLOW_LOOPBACK: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .default(false),
};
