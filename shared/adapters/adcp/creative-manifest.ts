import type { MediaFacts } from '../../assets/media-probe';
import type { SellerFormat } from './connection';

/** Where the seller fetches the bytes (our immutable, content-addressed asset URL) and what they are. */
export interface StoredMedia {
  url: string;
  contentType: string;
  sizeBytes: number;
  facts: MediaFacts;
}

export type Manifest = { assets: Record<string, Record<string, unknown>> } | { refusal: string };

const CONTAINERS: Record<string, string> = {
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
};

/**
 * The creative's assets keyed as the seller's format names its slots. The media fills the
 * format's slot of its kind (a required one first). A format the seller does not list leaves the
 * slots unknown: the media goes under the name of its kind and the seller's review judges it.
 * Pictures carry the width and height read from the bytes; without them nothing is sent.
 */
export function creativeManifest(formatId: string, format: SellerFormat | null, media: StoredMedia): Manifest {
  const { kind } = media.facts;
  if (kind === 'document') return { refusal: `A ${media.contentType} file is not a creative asset a seller can run.` };
  let slot: string = kind;
  if (format) {
    const slots = (format.assets ?? []).filter((a) => a.item_type !== 'repeatable_group' && a.asset_type === kind && a.asset_id);
    const chosen = slots.find((a) => a.required) ?? slots[0];
    if (!chosen) return { refusal: `The seller's format ${formatId} takes no ${kind} asset; nothing was sent.` };
    slot = chosen.asset_id!;
  }
  const base = { asset_type: kind, url: media.url };
  const container = CONTAINERS[media.contentType];
  const file = {
    file_size_bytes: media.sizeBytes,
    ...(container ? { container_format: container } : {}),
    ...(media.facts.durationMs ? { duration_ms: media.facts.durationMs } : {}),
  };
  if (kind === 'audio') return { assets: { [slot]: { ...base, ...file } } };
  const { width, height } = media.facts;
  if (!width || !height) {
    return { refusal: `The ${kind}'s width and height could not be read from its bytes (${media.contentType}); nothing was sent.` };
  }
  if (kind === 'image') return { assets: { [slot]: { ...base, width, height, format: media.contentType.split('/')[1] } } };
  return { assets: { [slot]: { ...base, width, height, ...file } } };
}
