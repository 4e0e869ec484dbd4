import { z } from 'zod';
import { EVENT_TYPE_NAMES, EVENT_TYPES } from '../events/catalogue';

const EventTypeSchema = z.enum(EVENT_TYPE_NAMES);
const EventTypes = z
  .array(EventTypeSchema)
  .min(1)
  .max(EVENT_TYPES.length)
  .refine((ts) => new Set(ts).size === ts.length, 'each event type once');

export const CreateSubscriptionSchema = z.strictObject({
  url: z.string().min(1).max(2048),
  eventTypes: EventTypes,
  description: z.string().min(1).max(500).optional(),
});
export type CreateSubscription = z.infer<typeof CreateSubscriptionSchema>;

export const UpdateSubscriptionSchema = z.strictObject({
  url: z.string().min(1).max(2048).optional(),
  eventTypes: EventTypes.optional(),
  description: z.string().min(1).max(500).nullable().optional(),
  enabled: z.boolean().optional(),
  expectedVersion: z.number().int().min(1).optional(),
});
export type UpdateSubscription = z.infer<typeof UpdateSubscriptionSchema>;

export const SubscriptionSchema = z.object({
  id: z.uuid(),
  url: z.string(),
  eventTypes: z.array(EventTypeSchema),
  description: z.string().nullable(),
  enabled: z.boolean(),
  /** `failing`: a delivery used up every retry; cleared by the next delivery that succeeds. */
  status: z.enum(['active', 'disabled', 'failing']),
  failingSince: z.string().nullable(),
  /** Until then, deliveries are signed with the previous secret too. */
  previousSecretExpiresAt: z.string().nullable(),
  version: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type Subscription = z.infer<typeof SubscriptionSchema>;

/** The signing secret, shown once: when the subscription is made and when the secret is rotated. */
export const SubscriptionWithSecretSchema = z.object({ subscription: SubscriptionSchema, secret: z.string() });

export const EventTypeViewSchema = z.object({ type: EventTypeSchema, subject: z.string(), description: z.string() });

export const DeliverySchema = z.object({
  id: z.uuid(),
  eventId: z.uuid(),
  eventType: EventTypeSchema,
  subjectId: z.string(),
  subjectVersion: z.number().int(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attemptCount: z.number().int(),
  nextAttemptAt: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
  createdAt: z.string(),
  attempts: z.array(
    z.object({
      attempt: z.number().int(),
      startedAt: z.string(),
      statusCode: z.number().int().nullable(),
      latencyMs: z.number().int(),
      error: z.string().nullable(),
    }),
  ),
});
export type Delivery = z.infer<typeof DeliverySchema>;

export const DeliveriesQuerySchema = z.strictObject({
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
