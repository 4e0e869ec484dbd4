import { randomBytes } from 'node:crypto';
import { mp4Sample, webmSample } from './media-samples';

/** Small files whose signatures are real: enough for content sniffing, distinct bytes every call. */
export const SAMPLE = {
  'image/png': () => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]),
  'video/mp4': () => mp4Sample(),
  'video/webm': () => webmSample(),
  'audio/mpeg': () => Buffer.concat([Buffer.from('ID3'), randomBytes(64)]),
} as const;

export const MEDIA_FOR: Record<string, keyof typeof SAMPLE> = {
  ctv: 'video/mp4',
  tv: 'video/mp4',
  cinema: 'video/mp4',
  audio: 'audio/mpeg',
  dooh: 'image/png',
  social: 'image/png',
  search: 'image/png',
};

/** A creative's create body for a channel over an uploaded asset; audio carries its delivery details. */
export const creativeBody = (channel: string, assetUrl: string, over: Record<string, unknown> = {}) => ({
  name: `${channel} spot`,
  channel,
  format: channel === 'audio' ? 'audio-30s' : 'video-30s',
  assetUrl,
  copyText: 'Refreshingly simple.',
  ...(channel === 'audio'
    ? {
        audioDelivery: {
          tagline: 'Taste it',
          destinationUrl: 'https://acme.example/drinks',
          callToAction: 'Visit us',
          language: 'en-GB',
        },
      }
    : {}),
  ...over,
});
