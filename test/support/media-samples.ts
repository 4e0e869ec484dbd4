import { randomBytes } from 'node:crypto';
import { createFile } from 'mp4box';
import { ArrayBufferTarget, Muxer } from 'webm-muxer';

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

/**
 * A real WebM (EBML header, segment info, one VP9 video track, clusters) of a known size, written
 * by webm-muxer: a frame every second and one at `durationMs`, which the container's duration
 * then is. Random frame bytes make every call a distinct file.
 */
export function webmSample(opts: { width?: number; height?: number; durationMs?: number } = {}): Buffer {
  const { width = 1280, height = 720, durationMs = 6_000 } = opts;
  const target = new ArrayBufferTarget();
  const muxer = new Muxer({ target, video: { codec: 'V_VP9', width, height, frameRate: 1 } });
  const times = [...Array.from({ length: Math.ceil(durationMs / 1_000) }, (_, i) => i * 1_000), durationMs];
  for (const ms of times) muxer.addVideoChunkRaw(new Uint8Array(randomBytes(32)), ms === 0 ? 'key' : 'delta', ms * 1_000);
  muxer.finalize();
  return Buffer.from(target.buffer);
}

/** A PCM WAV (16-bit mono, 8 kHz) of exactly `durationMs` of noise: its length is in its header and its data. */
export function wavSample(durationMs = 15_000): Buffer {
  const rate = 8_000;
  const data = randomBytes(Math.round((rate * 2 * durationMs) / 1000));
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
