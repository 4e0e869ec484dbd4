import { AdcpError } from '@adcp/sdk/server';

/**
 * The creative side of the test seller (adcp-test-seller.ts), as a seller reviews: its formats
 * (list_creative_formats), sync_creatives checking the format's required slot, fetching the asset
 * and judging its size, and list_creatives for the creatives it holds for review.
 */

/** The seller's video format: one required video slot, at least this wide. */
export const VIDEO_FORMAT = 'video_15s';
export const VIDEO_SLOT = 'video_file';
export const MIN_VIDEO_WIDTH = 640;
/** A display format, whose only slot is an image. */
export const DISPLAY_FORMAT = 'display_300x250';
/** A video with a title card: the video slot, a required headline of at most 40 characters, an optional call to action. */
export const TITLED_VIDEO_FORMAT = 'video_15s_titled';
export const HEADLINE_MAX = 40;
/** A video that is clicked through: the video slot, a required landing page, an optional impression tracker. */
export const CLICKABLE_VIDEO_FORMAT = 'video_15s_clickable';
export const LANDING_SLOT = 'landing_page';

export interface SyncedAsset {
  asset_type?: string;
  url?: string;
  width?: number;
  height?: number;
  [k: string]: unknown;
}

/** What the test sees and sets of the seller's creative review. */
export interface CreativeDesk {
  /** Every creative sync_creatives brought, with the bytes the seller fetched from its asset URL (null: fetch failed). */
  creatives: Array<{
    creative: { creative_id: string; format_id: { id: string }; assets: Record<string, SyncedAsset> };
    fetched: Buffer | null;
  }>;
  /** A video creative that passes the format's checks is held for review (pending_review) rather than approved at once. */
  holdCreativesForReview: boolean;
  /** The review status of each creative held for review, by creative id: the test decides them. */
  reviewStatus: Map<string, 'pending_review' | 'approved' | 'rejected'>;
  /** list_creative_formats fails this many more times (then lists as usual). */
  formatListingFailures: number;
}

export function creativeTools(desk: CreativeDesk, origin: string) {
  const listedFormats = () => ({
    formats: [
      {
        format_id: { agent_url: origin, id: VIDEO_FORMAT },
        name: 'Video, 15 seconds',
        assets: [
          {
            item_type: 'individual',
            asset_id: VIDEO_SLOT,
            asset_type: 'video',
            required: true,
            requirements: { min_width: MIN_VIDEO_WIDTH },
          },
        ],
      },
      {
        format_id: { agent_url: origin, id: TITLED_VIDEO_FORMAT },
        name: 'Video, 15 seconds, with a title card',
        assets: [
          { item_type: 'individual', asset_id: VIDEO_SLOT, asset_type: 'video', required: true },
          { item_type: 'individual', asset_id: 'headline', asset_type: 'text', required: true, requirements: { max_length: HEADLINE_MAX } },
          { item_type: 'individual', asset_id: 'cta_text', asset_type: 'text', required: false },
        ],
      },
      {
        format_id: { agent_url: origin, id: CLICKABLE_VIDEO_FORMAT },
        name: 'Video, 15 seconds, clickable',
        assets: [
          { item_type: 'individual', asset_id: VIDEO_SLOT, asset_type: 'video', required: true },
          { item_type: 'individual', asset_id: LANDING_SLOT, asset_type: 'url', required: true, requirements: { role: 'landing_page' } },
          {
            item_type: 'individual',
            asset_id: 'impression_pixel',
            asset_type: 'url',
            required: false,
            requirements: { role: 'impression_tracker' },
          },
        ],
      },
      {
        format_id: { agent_url: origin, id: DISPLAY_FORMAT },
        name: 'Display, 300×250',
        assets: [{ item_type: 'individual', asset_id: 'banner_image', asset_type: 'image', required: true }],
      },
    ],
  });

  return {
    listCreativeFormats: async () => {
      if (desk.formatListingFailures > 0) {
        desk.formatListingFailures--;
        throw new AdcpError('SERVICE_UNAVAILABLE', { message: 'The format catalogue is being rebuilt.', recovery: 'transient' });
      }
      return listedFormats();
    },

    // As a seller reviews: the format's required slot must be filled, its bytes fetched, its size enough.
    syncCreatives: async (creatives: Array<{ creative_id: string; format_id: { id: string }; assets: Record<string, SyncedAsset> }>) =>
      Promise.all(
        creatives.map(async (c) => {
          const failed = (code: string, message: string) => ({
            creative_id: c.creative_id,
            action: 'failed' as const,
            errors: [{ code, message }],
          });
          const received: CreativeDesk['creatives'][number] = { creative: c, fetched: null };
          desk.creatives.push(received);
          if (c.format_id.id === TITLED_VIDEO_FORMAT) {
            const headline = c.assets.headline?.content;
            if (typeof headline !== 'string' || headline.length > HEADLINE_MAX) return failed('INVALID_REQUEST', 'headline is required');
            return { creative_id: c.creative_id, action: 'created' as const, status: 'approved' as const };
          }
          if (c.format_id.id === CLICKABLE_VIDEO_FORMAT) {
            const landing = c.assets[LANDING_SLOT];
            if (landing?.url_type !== 'clickthrough' || !URL.canParse(String(landing.url))) {
              return failed('INVALID_REQUEST', `${LANDING_SLOT} is required`);
            }
            return { creative_id: c.creative_id, action: 'created' as const, status: 'approved' as const };
          }
          if (c.format_id.id !== VIDEO_FORMAT)
            return { creative_id: c.creative_id, action: 'created' as const, status: 'approved' as const };
          const video = c.assets[VIDEO_SLOT];
          if (!video?.url) return failed('INVALID_REQUEST', `${VIDEO_SLOT} is required`);
          const res = await fetch(video.url).catch(() => null);
          const fetched = res?.ok ? Buffer.from(await res.arrayBuffer()) : null;
          received.fetched = fetched;
          if (!fetched) return failed('INVALID_REQUEST', `${video.url} could not be fetched`);
          if ((video.width ?? 0) < MIN_VIDEO_WIDTH) {
            return {
              creative_id: c.creative_id,
              action: 'created' as const,
              status: 'rejected' as const,
              errors: [{ code: 'CREATIVE_REJECTED', message: `The video is ${video.width} wide; this format needs ${MIN_VIDEO_WIDTH}.` }],
            };
          }
          if (desk.holdCreativesForReview) {
            desk.reviewStatus.set(c.creative_id, 'pending_review');
            return { creative_id: c.creative_id, action: 'created' as const, status: 'pending_review' as const };
          }
          return { creative_id: c.creative_id, action: 'created' as const, status: 'approved' as const };
        }),
      ),

    // The creatives it holds for review, as its reviewers decide them (the test sets reviewStatus).
    listCreatives: async (req: { filters?: { creative_ids?: string[] } }) => {
      const ids = (req.filters?.creative_ids ?? [...desk.reviewStatus.keys()]).filter((id) => desk.reviewStatus.has(id));
      const now = new Date().toISOString();
      return {
        query_summary: { total_matching: ids.length, returned: ids.length },
        pagination: { has_more: false },
        creatives: ids.map((id) => ({
          creative_id: id,
          name: id,
          format_id: { agent_url: origin, id: VIDEO_FORMAT },
          status: desk.reviewStatus.get(id)!,
          created_date: now,
          updated_date: now,
        })),
      };
    },
  };
}
