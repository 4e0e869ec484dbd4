import { imageSize } from 'image-size';
import { createFile, MP4BoxBuffer } from 'mp4box';

/** What a seller asks of stored media: its kind, and for pictures its width and height. */
export interface MediaFacts {
  kind: 'image' | 'video' | 'audio' | 'document';
  /** Pixels, read from the bytes; null when the container does not say or cannot be read. */
  width: number | null;
  height: number | null;
  durationMs: number | null;
}

/**
 * mp4box reports a box it cannot parse on console.error, whatever its log level; the probe's
 * answer (no size) says it instead. The parse is synchronous, so nothing else writes meanwhile.
 */
function quietly<T>(run: () => T): T {
  // eslint-disable-next-line no-console
  const write = console.error;
  // eslint-disable-next-line no-console
  console.error = () => undefined;
  try {
    return run();
  } finally {
    // eslint-disable-next-line no-console
    console.error = write;
  }
}

const kindOf = (contentType: string): MediaFacts['kind'] =>
  contentType.startsWith('image/')
    ? 'image'
    : contentType.startsWith('video/')
      ? 'video'
      : contentType.startsWith('audio/')
        ? 'audio'
        : 'document';

/** The first video track's size and the movie's length, from an MP4's own boxes (moov may sit at either end). */
function probeMp4(bytes: Buffer): Pick<MediaFacts, 'width' | 'height' | 'durationMs'> {
  const file = createFile();
  const seen: { info?: { duration: number; timescale: number; videoTracks: Array<{ video?: { width: number; height: number } }> } } = {};
  file.onReady = (ready) => (seen.info = ready as never);
  file.onError = () => undefined;
  try {
    const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
    quietly(() => {
      file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(copy, 0));
      file.flush();
    });
  } catch {
    return { width: null, height: null, durationMs: null };
  }
  const found = seen.info;
  const video = found?.videoTracks[0]?.video;
  return {
    width: video?.width || null,
    height: video?.height || null,
    durationMs: found && found.timescale > 0 ? Math.round((found.duration / found.timescale) * 1000) : null,
  };
}

/** Reads the facts from the stored bytes themselves, never from what the uploader declared. */
export function probeMedia(bytes: Buffer, contentType: string): MediaFacts {
  const kind = kindOf(contentType);
  if (kind === 'image') {
    try {
      const size = imageSize(bytes);
      return { kind, width: size.width ?? null, height: size.height ?? null, durationMs: null };
    } catch {
      return { kind, width: null, height: null, durationMs: null };
    }
  }
  if (contentType === 'video/mp4') return { kind, ...probeMp4(bytes) };
  return { kind, width: null, height: null, durationMs: null };
}
