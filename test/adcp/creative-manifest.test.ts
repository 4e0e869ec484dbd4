import { probeMedia } from '../../shared/assets/media-probe';
import { creativeManifest, type StoredMedia } from '../../shared/adapters/adcp/creative-manifest';
import type { SellerFormat } from '../../shared/adapters/adcp/connection';
import { mp4Sample } from '../support/media-samples';

/** A 2×3 PNG, as an image editor writes it. */
const PNG_2x3 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAYAAAC56t6BAAAAEUlEQVR42mNk+M9QzwAEjDAGACCDAv8cI7IoAAAAAElFTkSuQmCC',
  'base64',
);

const stored = (bytes: Buffer, contentType: string): StoredMedia => ({
  url: 'https://flightdeck.example/files/assets/x',
  contentType,
  sizeBytes: bytes.length,
  facts: probeMedia(bytes, contentType),
});

const format = (assets: SellerFormat['assets']): SellerFormat => ({ format_id: { id: 'f' }, assets });

describe('reading media facts from the bytes', () => {
  test("an MP4's first video track gives the size, the movie its length", () => {
    expect(probeMedia(mp4Sample({ width: 854, height: 480, durationMs: 30_000 }), 'video/mp4')).toEqual({
      kind: 'video',
      width: 854,
      height: 480,
      durationMs: 30_000,
    });
  });

  test("a PNG's header gives its size", () => {
    expect(probeMedia(PNG_2x3, 'image/png')).toMatchObject({ kind: 'image', width: 2, height: 3 });
  });

  test('bytes that only carry the signature give no size, and do not throw', () => {
    const signatureOnly = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(32, 1)]);
    expect(probeMedia(signatureOnly, 'video/mp4')).toMatchObject({ width: null, height: null });
    expect(probeMedia(Buffer.concat([PNG_2x3.subarray(0, 8), Buffer.alloc(8)]), 'image/png')).toMatchObject({ width: null, height: null });
  });
});

describe("filling the seller's format", () => {
  test('the required slot of the media kind is chosen over an optional one', () => {
    const manifest = creativeManifest(
      'f',
      format([
        { item_type: 'individual', asset_id: 'teaser', asset_type: 'video', required: false },
        { item_type: 'individual', asset_id: 'logo', asset_type: 'image', required: true },
        { item_type: 'individual', asset_id: 'main_video', asset_type: 'video', required: true },
      ]),
      stored(mp4Sample(), 'video/mp4'),
    );
    expect(Object.keys('assets' in manifest ? manifest.assets : {})).toEqual(['main_video']);
  });

  test('an image carries its size and format; audio needs no size', () => {
    expect(creativeManifest('f', null, stored(PNG_2x3, 'image/png'))).toEqual({
      assets: { image: { asset_type: 'image', url: 'https://flightdeck.example/files/assets/x', width: 2, height: 3, format: 'png' } },
    });
    const mp3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(32)]);
    expect(
      creativeManifest(
        'f',
        format([{ item_type: 'individual', asset_id: 'spot', asset_type: 'audio', required: true }]),
        stored(mp3, 'audio/mpeg'),
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

  test('a document is no creative asset', () => {
    expect(creativeManifest('f', null, stored(Buffer.from('%PDF-1.7'), 'application/pdf'))).toHaveProperty('refusal');
  });
});
