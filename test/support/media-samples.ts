import { randomBytes } from 'node:crypto';
import { createFile } from 'mp4box';

/**
 * A real MP4 (ftyp, moov with one H.264 video track, mdat) of a known size and length, written by
 * mp4box: what a seller's probe reads is what the test chose. The one sample's bytes are random,
 * so every call is a distinct file.
 */
export function mp4Sample(opts: { width?: number; height?: number; durationMs?: number } = {}): Buffer {
  const { width = 1280, height = 720, durationMs = 15_000 } = opts;
  const file = createFile();
  const track = file.addTrack({
    width,
    height,
    timescale: 1000,
    duration: durationMs,
    type: 'avc1',
    // An AVCDecoderConfigurationRecord header (version 1, High profile, level 3.1) with no parameter sets.
    avcDecoderConfigRecord: new Uint8Array([1, 0x64, 0, 0x1f, 0xff, 0xe0, 0]).buffer,
  } as never);
  file.addSample(track, new Uint8Array(randomBytes(64)), { duration: durationMs, is_sync: true } as never);
  const stream = file.getBuffer() as unknown as { buffer: ArrayBuffer; byteLength: number };
  return Buffer.from(stream.buffer, 0, stream.byteLength);
}
