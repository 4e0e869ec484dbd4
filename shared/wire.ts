import { z } from 'zod';

/** Shapes shared by many response schemas, so that every date-time and id reads the same in the OpenAPI document. */
export const DateTimeSchema = z.iso.datetime({ offset: true });
export const UuidSchema = z.uuid();
export const Sha256HexSchema = z.string().regex(/^[a-f0-9]{64}$/);
/** A JSON object whose members are not modeled (the spec's free-form content). */
export const FreeFormSchema = z.looseObject({});
