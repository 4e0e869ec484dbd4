import { z } from 'zod';
import { notFound } from '../../shared/errors';
import { requireAssigned, requireStaff } from '../../shared/staff/staff-access';
import { relayAfterCommit } from '../../shared/outbox/outbox';
import { BrowserJobEnvelope, BrowserJobList, BrowserJobRequestSchema } from '../../shared/bookings/browser-job-schemas';
import { findBrowserJob, listBookingBrowserJobs, requestBrowserJob } from '../../shared/bookings/browser-jobs';
import type { ApiDeps } from '../deps';
import { defineRoute, type RouteDef } from '../http/route';
import { PathId, uuidOr404 } from '../http/params';
import { staffOnly } from './fulfilment';

const NOT_YOURS = 'Not staff, not assigned to this client, or no such job.';

/** Browser jobs (spec 13): asked for by staff, run by the browser worker, read back with their evidence. */
export function browserJobRoutes(deps: ApiDeps): RouteDef[] {
  const { db, logger } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/api/v1/internal/fulfilment/clients/:advertiserId/campaigns/:campaignId/browser-jobs',
      operationId: 'recordBrowserJob',
      summary:
        "Ask for a supervised, read-only browser job on a supplier's site: recorded and queued. Observe: an official public source; prepare: your started computer-use line. It submits nothing and buys nothing; read the job at its href for its evidence.",
      tags: ['staff'],
      access: 'bearer',
      scope: 'staff',
      params: z.strictObject({ advertiserId: PathId, campaignId: PathId }),
      body: BrowserJobRequestSchema,
      authorize: staffOnly(deps),
      responses: {
        202: {
          description: 'Recorded and queued: the job is `queued`. Read it at its `href` (also the Location header).',
          schema: BrowserJobEnvelope,
          headers: { location: { description: 'Where to read the job.', required: true, schema: { type: 'string' } } },
        },
        404: { description: 'Not staff, not assigned, or no such line.' },
        409: { description: 'Snapshot digest mismatch, or the line is not claimed and in flight.' },
        422: { description: 'Not an official source, credentials in the address, or automation not permitted.' },
      },
      async handler({ principal, params, body, log }) {
        const staff = await requireStaff(deps.staff, principal);
        const { browserJob, queued } = await requestBrowserJob(db, staff, params.advertiserId, params.campaignId, body, {
          allowLoopback: deps.config.BROWSER_ALLOW_LOOPBACK,
        });
        await relayAfterCommit(db, deps.producers.addAll, log ?? logger, { browserJobId: browserJob.id }, queued);
        return { status: 202, body: { browserJob }, headers: { location: browserJob.href } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/internal/fulfilment/browser-jobs/:browserJobId',
      operationId: 'getBrowserJob',
      summary:
        'A browser job: its status, timings, and once completed its evidence (screenshot, visible text, final URL and status, SHA-256 of each).',
      tags: ['staff'],
      access: 'bearer',
      scope: 'staff',
      params: z.strictObject({ browserJobId: PathId }),
      authorize: staffOnly(deps),
      responses: { 200: { description: 'The job.', schema: BrowserJobEnvelope }, 404: { description: NOT_YOURS } },
      async handler({ principal, params }) {
        const staff = await requireStaff(deps.staff, principal);
        return { status: 200, body: { browserJob: await findBrowserJob(db, staff, params.browserJobId) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/internal/fulfilment/bookings/:bookingId/browser-jobs',
      operationId: 'listBookingBrowserJobs',
      summary: "A booking's browser jobs, newest first (the latest 50).",
      tags: ['staff'],
      access: 'bearer',
      scope: 'staff',
      params: z.strictObject({ bookingId: PathId }),
      authorize: staffOnly(deps),
      responses: {
        200: { description: 'The jobs.', schema: BrowserJobList },
        404: { description: 'Not staff, not assigned, or no such booking.' },
      },
      async handler({ principal, params }) {
        const staff = await requireStaff(deps.staff, principal);
        const booking = await db('bookings')
          .where({ id: uuidOr404(params.bookingId) })
          .first('id', 'advertiser_id');
        if (!booking) throw notFound();
        requireAssigned(staff, booking.advertiser_id);
        return { status: 200, body: { browserJobs: await listBookingBrowserJobs(db, booking.id) } };
      },
    }),
  ];
}
