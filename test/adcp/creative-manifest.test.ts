import { probeMedia } from '../../shared/assets/media-probe';
import { creativeManifest, type StoredMedia } from '../../shared/adapters/adcp/creative-manifest';
import type { SellerFormat } from '../../shared/adapters/adcp/connection';
import type { CreativeCopy } from '../../shared/adapters/adapter';
import { creativeCopyOf } from '../../shared/creatives/creative-store';
import { mp4Sample, wavSample, webmSample } from '../support/media-samples';

/** A 2×3 PNG, as an image editor writes it. */
const PNG_2x3 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEUlEQVR42mNk+M9QzwAEjDAGACCDAv8cI7IoAAAAAElFTkSuQmCC',
  'base64',
);

const stored = async (bytes: Buffer, contentType: string): Promise<StoredMedia> => ({
  url: 'https://flightdeck.example/files/assets/x',
  contentType,
  sizeBytes: bytes.length,
  facts: await probeMedia(bytes, contentType),
});

const format = (assets: SellerFormat['assets']): SellerFormat => ({ format_id: { id: 'f' }, assets });
const COPY: CreativeCopy = { copyText: 'Spring fares to Lisbon, from £49.' };

describe('reading media facts from the bytes', () => {
  test("an MP4's first video track gives the size, the movie its length", async () => {
    expect(await probeMedia(mp4Sample({ width: 854, height: 480, durationMs: 30_000 }), 'video/mp4')).toEqual({
      kind: 'video',
      width: 854,
      height: 480,
      durationMs: 30_000,
    });
  });

  test("a PNG's header gives its size", async () => {
    expect(await probeMedia(PNG_2x3, 'image/png')).toMatchObject({ kind: 'image', width: 2, height: 3 });
  });

  test("a WebM's video track gives the size, its segment the length", async () => {
    expect(await probeMedia(webmSample({ width: 1920, height: 1080, durationMs: 6_000 }), 'video/webm')).toEqual({
      kind: 'video',
      width: 1920,
      height: 1080,
      durationMs: 6_000,
    });
    expect(await probeMedia(webmSample({ width: 640, height: 360, durationMs: 15_000 }), 'video/webm')).toEqual({
      kind: 'video',
      width: 640,
      height: 360,
      durationMs: 15_000,
    });
  });

  test("a sound's length is read from it, and a sound has no size", async () => {
    expect(await probeMedia(wavSample(15_000), 'audio/wav')).toEqual({ kind: 'audio', width: null, height: null, durationMs: 15_000 });
    expect(await probeMedia(wavSample(30_000), 'audio/wav')).toEqual({ kind: 'audio', width: null, height: null, durationMs: 30_000 });
  });

  test('bytes that only carry the signature give no size, and do not throw', async () => {
    const signatureOnly = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(32, 1)]);
    expect(await probeMedia(signatureOnly, 'video/mp4')).toMatchObject({ width: null, height: null });
    expect(await probeMedia(Buffer.concat([PNG_2x3.subarray(0, 8), Buffer.alloc(8)]), 'image/png')).toMatchObject({
      width: null,
      height: null,
    });
    const webm = webmSample();
    for (const cut of [webm.subarray(0, 4), webm.subarray(0, 40), Buffer.concat([webm.subarray(0, 4), Buffer.alloc(64, 0xff)])]) {
      expect(await probeMedia(cut, 'video/webm')).toEqual({ kind: 'video', width: null, height: null, durationMs: null });
    }
    expect(await probeMedia(Buffer.concat([Buffer.from('ID3'), Buffer.alloc(32)]), 'audio/mpeg')).toMatchObject({ durationMs: null });
  });
});

describe("filling the seller's format", () => {
  test('the required slot of the media kind is chosen over an optional one', async () => {
    const manifest = creativeManifest(
      'f',
      format([
        { item_type: 'individual', asset_id: 'teaser', asset_type: 'video', required: false },
        { item_type: 'individual', asset_id: 'logo', asset_type: 'image', required: true },
        { item_type: 'individual', asset_id: 'main_video', asset_type: 'video', required: true },
      ]),
      await stored(mp4Sample(), 'video/mp4'),
      COPY,
    );
    expect(Object.keys('assets' in manifest ? manifest.assets : {})).toEqual(['main_video']);
  });

  test('an image carries its size and format; audio needs no size', async () => {
    expect(creativeManifest('f', null, await stored(PNG_2x3, 'image/png'), COPY)).toEqual({
      assets: { image: { asset_type: 'image', url: 'https://flightdeck.example/files/assets/x', width: 2, height: 3, format: 'png' } },
    });
    const mp3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(32)]);
    expect(
      creativeManifest(
        'f',
        format([{ item_type: 'individual', asset_id: 'spot', asset_type: 'audio', required: true }]),
        await stored(mp3, 'audio/mpeg'),
        COPY,
      ),
    ).toEqual({
      assets: {
        spot: {
          asset_type: 'audio',
          url: 'https://flightdeck.example/files/assets/x',
          file_size_bytes: mp3.length,
          container_format: 'mp3',
        },
      },
    });
  });

  describe("text slots take the creative's words", () => {
    const native = format([
      { item_type: 'individual', asset_id: 'main_image', asset_type: 'image', required: true },
      { item_type: 'individual', asset_id: 'headline', asset_type: 'text', required: true, requirements: { max_length: 40 } },
      { item_type: 'individual', asset_id: 'sub_headline', asset_type: 'text', required: false },
      { item_type: 'individual', asset_id: 'body_text', asset_type: 'text', required: false, requirements: { max_length: 90 } },
      { item_type: 'individual', asset_id: 'cta_text', asset_type: 'text', required: false },
      { item_type: 'individual', asset_id: 'sponsor_name', asset_type: 'text', required: false },
    ]);
    const words: CreativeCopy = { ...COPY, headline: 'Lisbon for spring', subline: 'Three nights, one fare', cta: 'Book now' };

    test('each slot by its name: headline, subline, body and call to action; a slot named for none of them is left to the seller', async () => {
      expect(creativeManifest('native', native, await stored(PNG_2x3, 'image/png'), words)).toEqual({
        assets: {
          main_image: expect.objectContaining({ asset_type: 'image', width: 2, height: 3 }),
          headline: { asset_type: 'text', content: 'Lisbon for spring' },
          sub_headline: { asset_type: 'text', content: 'Three nights, one fare' },
          body_text: { asset_type: 'text', content: 'Spring fares to Lisbon, from £49.' },
          cta_text: { asset_type: 'text', content: 'Book now' },
        },
      });
    });

    test('a required slot the creative has no words for refuses it before anything is sent', async () => {
      const manifest = creativeManifest('native', native, await stored(PNG_2x3, 'image/png'), COPY);
      expect(manifest).toEqual({ refusal: expect.stringContaining('requires text "headline"') });
    });

    test('words longer than a required slot refuse the creative; longer than an optional one, the slot is left out', async () => {
      const long = 'x'.repeat(41);
      expect(creativeManifest('native', native, await stored(PNG_2x3, 'image/png'), { ...words, headline: long })).toEqual({
        refusal: expect.stringContaining('"headline" is 41 characters; the seller\'s format native takes 1 to 40'),
      });
      const manifest = creativeManifest('native', native, await stored(PNG_2x3, 'image/png'), { ...words, copyText: 'y'.repeat(91) });
      expect('assets' in manifest && Object.keys(manifest.assets)).toEqual(['main_image', 'headline', 'sub_headline', 'cta_text']);
    });

    test("an audio spot's tagline, call to action and destination fill the slots named for them; trackers are left alone", async () => {
      const spot = format([
        { item_type: 'individual', asset_id: 'audio_file', asset_type: 'audio', required: true },
        { item_type: 'individual', asset_id: 'companion_tagline', asset_type: 'text', required: true },
        { item_type: 'individual', asset_id: 'call_to_action', asset_type: 'text', required: true },
        { item_type: 'individual', asset_id: 'companion_link', asset_type: 'url', required: false, requirements: { role: 'clickthrough' } },
        {
          item_type: 'individual',
          asset_id: 'impression_pixel',
          asset_type: 'url',
          required: false,
          requirements: { role: 'impression_tracker' },
        },
      ]);
      const audio = { tagline: 'Fly for less', callToAction: 'Visit the site', destinationUrl: 'https://fly.example/spring' };
      // As a stored audio spot's words reach the reviewer (creativeCopyOf): its destination is the creative's.
      const copy = { ...COPY, audio, destinationUrl: audio.destinationUrl };
      const manifest = creativeManifest('spot', spot, await stored(wavSample(15_000), 'audio/wav'), copy);
      expect(manifest).toEqual({
        assets: {
          audio_file: expect.objectContaining({ asset_type: 'audio', duration_ms: 15_000, container_format: 'wav' }),
          companion_tagline: { asset_type: 'text', content: 'Fly for less' },
          call_to_action: { asset_type: 'text', content: 'Visit the site' },
          companion_link: { asset_type: 'url', url: 'https://fly.example/spring', url_type: 'clickthrough' },
        },
      });
    });
  });

  describe("a clickthrough or landing-page slot takes the creative's destination, whatever its media", () => {
    const display = (required: boolean) =>
      format([
        { item_type: 'individual', asset_id: 'banner', asset_type: 'image', required: true },
        { item_type: 'individual', asset_id: 'click_url', asset_type: 'url', required, requirements: { role: 'clickthrough' } },
        { item_type: 'individual', asset_id: 'landing_page', asset_type: 'url', required: false },
        { item_type: 'individual', asset_id: 'click_pixel', asset_type: 'url', required: false, requirements: { role: 'click_tracker' } },
      ]);

    test('a picture with a destination fills each slot for it, by role or by name; a tracker is left to the seller', async () => {
      const manifest = creativeManifest('display', display(true), await stored(PNG_2x3, 'image/png'), {
        ...COPY,
        destinationUrl: 'https://fly.example/lisbon',
      });
      const link = { asset_type: 'url', url: 'https://fly.example/lisbon', url_type: 'clickthrough' };
      expect(manifest).toEqual({
        assets: { banner: expect.objectContaining({ asset_type: 'image' }), click_url: link, landing_page: link },
      });
    });

    test('without a destination, a required slot refuses the creative before anything is sent; an optional one is left out', async () => {
      expect(creativeManifest('display', display(true), await stored(PNG_2x3, 'image/png'), COPY)).toEqual({
        refusal: expect.stringContaining('requires a clickthrough URL ("click_url"), and the creative has no destination'),
      });
      const manifest = creativeManifest('display', display(false), await stored(PNG_2x3, 'image/png'), COPY);
      expect('assets' in manifest && Object.keys(manifest.assets)).toEqual(['banner']);
    });
  });

  test("an audio spot's destination is the one it was created with until one is set on the creative", () => {
    const audio = { tagline: 'Fly for less', callToAction: 'Visit', destinationUrl: 'https://fly.example/a', language: 'en-GB' };
    expect(creativeCopyOf({ copy_text: 'x', audio_delivery: audio, delivery: {} }).destinationUrl).toBe('https://fly.example/a');
    const set = { destinationUrl: 'https://fly.example/b' };
    expect(creativeCopyOf({ copy_text: 'x', audio_delivery: audio, delivery: set }).destinationUrl).toBe('https://fly.example/b');
    expect(creativeCopyOf({ copy_text: 'x', audio_delivery: null, delivery: {} })).not.toHaveProperty('destinationUrl');
  });

  test('a document is no creative asset', async () => {
    expect(creativeManifest('f', null, await stored(Buffer.from('%PDF-1.7'), 'application/pdf'), COPY)).toHaveProperty('refusal');
  });
});
