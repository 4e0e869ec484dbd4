import { parse as parseCsv } from 'csv-parse/sync';
import { z } from 'zod';
import { badRequest } from '../errors';
import { sniffContentType } from '../assets/signatures';

export const ARTIFACT_MEDIA_TYPES = [
  'application/pdf',
  'text/csv',
  'application/json',
  'text/plain',
  'image/png',
  'image/jpeg',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
] as const;
export const ArtifactMediaTypeSchema = z.enum(ARTIFACT_MEDIA_TYPES);
export type ArtifactMediaType = z.infer<typeof ArtifactMediaTypeSchema>;

/** Standard base64 (RFC 4648 §4), padded: what Buffer.from would otherwise decode leniently. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function decodeBase64(content: string): Buffer {
  if (!BASE64.test(content)) {
    throw badRequest(
      'contentBase64 is not valid base64.',
      [{ path: 'body.contentBase64', message: 'standard, padded base64' }],
      'invalid_base64',
    );
  }
  const bytes = Buffer.from(content, 'base64');
  if (bytes.length === 0) throw badRequest('contentBase64 decodes to no bytes.', [{ path: 'body.contentBase64', message: 'empty' }]);
  return bytes;
}

const utf8 = (b: Buffer): string | null => {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    return null;
  }
};
const startsWith = (b: Buffer, sig: number[]) => sig.every((x, i) => b[i] === x);
/** Zip entry names are stored as plain text, so a workbook names its parts in the clear. */
const isXlsx = (b: Buffer) => startsWith(b, [0x50, 0x4b, 0x03, 0x04]) && b.includes('xl/workbook.xml');
/** The compound-file (OLE2) header, with the BIFF workbook stream's name in UTF-16LE. */
const isXls = (b: Buffer) =>
  startsWith(b, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) &&
  (b.includes(Buffer.from('Workbook', 'utf16le')) || b.includes(Buffer.from('Book', 'utf16le')));

/** Whether the bytes really are the declared media type. */
function matches(bytes: Buffer, mediaType: ArtifactMediaType): boolean {
  switch (mediaType) {
    case 'application/pdf':
    case 'image/png':
    case 'image/jpeg':
      return sniffContentType(bytes) === mediaType;
    case 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet':
      return isXlsx(bytes);
    case 'application/vnd.ms-excel':
      return isXls(bytes);
    case 'application/json': {
      const text = utf8(bytes);
      if (text === null) return false;
      try {
        JSON.parse(text);
        return true;
      } catch {
        return false;
      }
    }
    case 'text/csv': {
      const text = utf8(bytes);
      if (text === null) return false;
      try {
        parseCsv(text, { bom: true, relax_column_count: false });
        return true;
      } catch {
        return false;
      }
    }
    case 'text/plain':
      return utf8(bytes) !== null;
  }
}

export function checkContent(bytes: Buffer, mediaType: ArtifactMediaType): void {
  if (!matches(bytes, mediaType)) {
    throw badRequest(
      `The decoded content is not ${mediaType}.`,
      [{ path: 'body.contentBase64', message: `not ${mediaType}` }],
      'content_type_mismatch',
    );
  }
}
