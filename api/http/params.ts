import { isUuid } from '../../shared/ids';
import { z } from 'zod';
import { notFound } from '../../shared/errors';

/** A path id: any string within bounds. Ids that are not uuids cannot name anything, so they are 404s, not 400s. */
export const PathId = z.string().min(1).max(128);

export function uuidOr404(id: string): string {
  if (!isUuid(id)) throw notFound();
  return id.toLowerCase();
}

export const IdParams = z.strictObject({ id: PathId });
export const LineParams = z.strictObject({ bookingId: PathId, lineId: PathId });
