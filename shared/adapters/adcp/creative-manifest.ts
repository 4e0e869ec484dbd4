import type { MediaFacts } from '../../assets/media-probe';
import type { CreativeCopy } from '../adapter';
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

type FormatAsset = NonNullable<SellerFormat['assets']>[number];

/**
 * Which of the creative's words a text slot takes, by the slot's id or role as sellers name them
 * (AdCP leaves the names to each format). Checked in order: a "sub headline" is a subline, not a
 * headline. A slot named for none of them is left to the seller.
 */
const TEXT_SLOTS: Array<[RegExp, (c: CreativeCopy) => string | undefined]> = [
  [/sub_?(head|line|title)|tagline/, (c) => c.subline ?? c.audio?.tagline],
  [/headline|title/, (c) => c.headline],
  [/cta|call_?to_?action|button/, (c) => c.cta ?? c.audio?.callToAction],
  [/disclaimer|legal|mandator/, (c) => (c.mandatories?.length ? c.mandatories.join(' ') : undefined)],
  [/body|description|copy|primary_text|^text$|message/, (c) => c.copyText],
];

const wordsFor = (slot: FormatAsset, copy: CreativeCopy): string | undefined => {
  const name = `${slot.asset_id ?? ''} ${slot.asset_role ?? ''}`.toLowerCase();
  return TEXT_SLOTS.find(([pattern]) => pattern.test(name))?.[1](copy);
};

/** A URL slot for where the creative sends people, by its role or name; other URL slots (trackers) are the seller's. */
const isDestinationSlot = (slot: FormatAsset) =>
  slot.asset_type === 'url' &&
  /click_?through|landing|destination/.test((slot.requirements?.role ?? `${slot.asset_id} ${slot.asset_role ?? ''}`).toLowerCase());

/**
 * The format's text slots filled from the creative's words, and its clickthrough or landing-page
 * slot from the creative's destination. A required slot the creative has nothing for, or words
 * outside a slot's length, refuse the creative before anything is sent (the seller would refuse
 * it, with less to go on); an optional one is filled only when they fit.
 */
function textAssets(formatId: string, format: SellerFormat, copy: CreativeCopy): Manifest {
  const assets: Record<string, Record<string, unknown>> = {};
  for (const slot of format.assets ?? []) {
    if (slot.item_type === 'repeatable_group' || !slot.asset_id) continue;
    if (isDestinationSlot(slot)) {
      if (copy.destinationUrl) assets[slot.asset_id] = { asset_type: 'url', url: copy.destinationUrl, url_type: 'clickthrough' };
      else if (slot.required) {
        return {
          refusal: `The seller's format ${formatId} requires a clickthrough URL ("${slot.asset_id}"), and the creative has no destination (set one with POST /api/v1/creatives/{id}/destination); nothing was sent.`,
        };
      }
      continue;
    }
    if (slot.asset_type !== 'text') continue;
    const words = wordsFor(slot, copy);
    const { min_length: min = 1, max_length: max = Infinity } = slot.requirements ?? {};
    const fits = words !== undefined && words.length >= min && words.length <= max;
    if (fits) assets[slot.asset_id] = { asset_type: 'text', content: words };
    else if (slot.required) {
      return {
        refusal:
          words === undefined
            ? `The seller's format ${formatId} requires text "${slot.asset_id}", which the creative does not carry (a headline, subline or call to action is set by revising the creative); nothing was sent.`
            : `The creative's text for "${slot.asset_id}" is ${words.length} characters; the seller's format ${formatId} takes ${max === Infinity ? `at least ${min}` : `${min} to ${max}`}. Nothing was sent.`,
      };
    }
  }
  return { assets };
}

/**
 * The creative's assets keyed as the seller's format names its slots. The media fills the
 * format's slot of its kind (a required one first), and its text slots take the creative's words
 * (`textAssets`). A format the seller does not list leaves the slots unknown: the media goes under
 * the name of its kind and the seller's review judges it. Pictures carry the width and height
 * read from the bytes; without them nothing is sent.
 */
export function creativeManifest(formatId: string, format: SellerFormat | null, media: StoredMedia, copy: CreativeCopy): Manifest {
  const mediaAssets = mediaManifest(formatId, format, media);
  if ('refusal' in mediaAssets || !format) return mediaAssets;
  const text = textAssets(formatId, format, copy);
  if ('refusal' in text) return text;
  return { assets: { ...mediaAssets.assets, ...text.assets } };
}

/** The media in its slot. */
function mediaManifest(formatId: string, format: SellerFormat | null, media: StoredMedia): Manifest {
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
