/**
 * What the bytes say they are. Uploads declare a content type; it must match the file's own
 * signature, so a script cannot arrive dressed as an image.
 */
const startsWith = (b: Buffer, sig: number[], offset = 0) => sig.every((x, i) => b[offset + i] === x);
const ascii = (b: Buffer, text: string, offset = 0) => b.subarray(offset, offset + text.length).toString('latin1') === text;

export function sniffContentType(b: Buffer): string | null {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (ascii(b, 'GIF87a') || ascii(b, 'GIF89a')) return 'image/gif';
  if (ascii(b, 'RIFF') && ascii(b, 'WEBP', 8)) return 'image/webp';
  if (ascii(b, 'RIFF') && ascii(b, 'WAVE', 8)) return 'audio/wav';
  if (ascii(b, 'ftyp', 4)) return 'video/mp4';
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return 'video/webm';
  if (ascii(b, 'OggS')) return 'audio/ogg';
  if (ascii(b, 'ID3') || startsWith(b, [0xff, 0xfb]) || startsWith(b, [0xff, 0xf3]) || startsWith(b, [0xff, 0xf2])) return 'audio/mpeg';
  if (ascii(b, '%PDF-')) return 'application/pdf';
  return null;
}
