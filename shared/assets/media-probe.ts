import { imageSize } from 'image-size';
import { createFile, MP4BoxBuffer } from 'mp4box';

/** What a seller asks of stored media: its kind, for pictures their width and height, for videos and sounds their length. */
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

// music-metadata ships ES modules only; loaded once, when first needed, as the module it is.
let mediaParser: Promise<typeof import('music-metadata')> | undefined;

/**
 * A WebM's (Matroska's) first video track's size and its length, and an audio file's length
 * (MP3, WAV, Ogg), read from the container by music-metadata. Nothing it cannot read is guessed.
 */
async function probeWithMusicMetadata(bytes: Buffer, contentType: string): Promise<Pick<MediaFacts, 'width' | 'height' | 'durationMs'>> {
  try {
    const { parseBuffer } = await (mediaParser ??= import('music-metadata'));
    const { format } = await parseBuffer(bytes, { mimeType: contentType, size: bytes.length }, { duration: true, skipCovers: true });
    const video = format.trackInfo?.find((t) => t.video?.pixelWidth && t.video.pixelHeight)?.video;
    return {
      width: video?.pixelWidth ?? null,
      height: video?.pixelHeight ?? null,
      durationMs: format.duration && Number.isFinite(format.duration) && format.duration > 0 ? Math.round(format.duration * 1000) : null,
    };
  } catch {
    return { width: null, height: null, durationMs: null };
  }
}

const READ_BY_MUSIC_METADATA = new Set(['video/webm', 'audio/mpeg', 'audio/wav', 'audio/ogg']);

/** Reads the facts from the stored bytes themselves, never from what the uploader declared. */
export async function probeMedia(bytes: Buffer, contentType: string): Promise<MediaFacts> {
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
  if (READ_BY_MUSIC_METADATA.has(contentType)) {
    const facts = await probeWithMusicMetadata(bytes, contentType);
    // A sound has no picture: only its length counts.
    return kind === 'audio' ? { kind, width: null, height: null, durationMs: facts.durationMs } : { kind, ...facts };
  }
  return { kind, width: null, height: null, durationMs: null };
}
