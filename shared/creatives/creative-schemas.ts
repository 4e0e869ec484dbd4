import { z } from 'zod';
import { ChannelSchema } from '../auth/products';

export const AudioDeliverySchema = z.strictObject({
  tagline: z.string().min(2).max(40),
  destinationUrl: z.url().max(2048),
  callToAction: z.string().min(1).max(80),
  language: z.string().min(2).max(16),
});

export const CreateCreativeSchema = z
  .strictObject({
    name: z.string().min(1).max(200),
    channel: ChannelSchema,
    format: z.string().min(1).max(100),
    assetUrl: z.string().min(1).max(2048),
    copyText: z.string().min(1).max(5000),
    audioDelivery: AudioDeliverySchema.optional(),
    campaignId: z.string().max(128).optional(),
  })
  // Audio spots carry their delivery metadata; other channels have none to carry.
  .refine((c) => c.channel !== 'audio' || c.audioDelivery !== undefined, {
    path: ['audioDelivery'],
    message: 'audioDelivery is required for the audio channel',
  })
  .refine((c) => c.channel === 'audio' || c.audioDelivery === undefined, {
    path: ['audioDelivery'],
    message: 'audioDelivery is only for the audio channel',
  })
  .meta({ id: 'CreateCreative' });
export type CreateCreative = z.infer<typeof CreateCreativeSchema>;

export const ReviseCreativeSchema = z
  .strictObject({
    headline: z.string().min(1).max(200).optional(),
    subline: z.string().min(1).max(300).optional(),
    cta: z.string().min(1).max(100).optional(),
    mandatories: z.array(z.string().min(1).max(60)).max(4).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: 'send at least one of headline, subline, cta, mandatories' })
  .meta({ id: 'ReviseCreative' });
export type ReviseCreative = z.infer<typeof ReviseCreativeSchema>;

/**
 * Where a creative sends the people it reaches (its clickthrough or landing page), for any
 * channel. An audio spot's `audioDelivery.destinationUrl` is its destination until one is set here.
 */
export const CreativeDestinationSchema = z
  .strictObject({ destinationUrl: z.url({ protocol: /^https?$/, error: 'an http or https URL' }).max(2048) })
  .meta({ id: 'CreativeDestination' });
export type CreativeDestination = z.infer<typeof CreativeDestinationSchema>;

export const SubmitCreativeSchema = z
  .strictObject({ adapterKey: z.string().min(1).max(100), channel: ChannelSchema.optional() })
  .meta({ id: 'SubmitCreative' });

export interface DeliveryMetadata {
  headline?: string;
  subline?: string;
  cta?: string;
  mandatories?: string[];
  destinationUrl?: string;
}

/** What a line carries of a creative: the spec's reference fields, plus the version and metadata digest it was approved at. */
export interface CreativeRef {
  id: string;
  name: string;
  format: string;
  assetUrl: string;
  assetFingerprint: string;
  version: number;
  metadataDigest: string;
}

/** One supplier review of one creative version. */
export const CreativeReviewSchema = z
  .object({
    id: z.string().min(1),
    creativeId: z.string().min(1),
    version: z.number().int().min(1),
    adapterKey: z.string().min(1),
    status: z.string().min(1),
    assetFingerprint: z.string().regex(/^sha256:[a-f0-9]{64}$/),
    metadataDigest: z.string().min(1),
    providerReference: z.string().nullable(),
    reasons: z.array(z.string()).nullable(),
    attemptId: z.string().nullable(),
    createdAt: z.iso.datetime({ offset: true }),
  })
  .meta({ id: 'CreativeReview' });

/** A creative: unknown fields allowed (the spec shows the envelope only). */
export const CreativeEnvelope = z
  .object({ creative: z.looseObject({ id: z.string(), version: z.number().int() }) })
  .meta({ id: 'CreativeEnvelope' });
