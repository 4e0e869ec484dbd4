import type { Request, Response } from 'express';
import type { ZodType, z } from 'zod';
import type { Principal } from '../../shared/auth/principal';
import type { Logger } from '../../shared/logger';
import type { ScopedResource } from '../../shared/access/resource-scope';
import type { ActionName } from '../../shared/agent/actions';

export type Access = 'public' | 'bearer';
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * How a bearer route keeps to the caller's product and channel scope (see docs/architecture.md):
 * - `{ resource, param }`: the path parameter names that resource; one outside the caller's
 *   scope is the same 404 as another tenant's, checked before the body is even read;
 * - `request`: the request creates something: channels outside the product are refused (403)
 *   and resources it names outside the scope are not found (404), by the domain;
 * - `filtered`: a list that holds only resources within the scope;
 * - `caller`: concerns no channel (the caller's own context, contracts, mandates, uploads, and
 *   creations that name nothing but take the caller's scope);
 * - `staff`: the staff surface, scoped by server-owned client assignments instead.
 *
 * `inRead: true` on a resource scope: the handler's one read of the resource applies the same
 * rule itself (a read that agents poll, or a launch's locking read, kept to one round trip). Only
 * for handlers whose read comes before anything else they do, in a transaction that a 404 rolls
 * back, and for routes that keep no idempotency record (refused at start). A delegated agent's
 * call to a governed route takes no approved step out of scope: the step is claimed only after
 * the action's resources are read within the caller's scope (`beginGovernedExecution`).
 */
export type RouteScope = { resource: ScopedResource; param: string; inRead?: true } | 'request' | 'filtered' | 'caller' | 'staff';

export interface RouteContext<P, Q, B, A extends Access> {
  params: P;
  query: Q;
  body: B;
  principal: A extends 'bearer' ? Principal : null;
  headers: Request['headers'];
  requestId: string;
  log: Logger;
  req: Request;
  res: Response;
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  /** `body` as JSON text, when its exact bytes must be sent (a replay sends the first response's). */
  json?: string;
  headers?: Record<string, string>;
  contentType?: string;
}

export interface ResponseDoc {
  description: string;
  schema?: ZodType;
  contentType?: string;
  /** The same answer in other content types, chosen by the request's Accept (e.g. text/csv). */
  alternatives?: Record<string, ZodType>;
  /** Response headers beyond those every response carries. */
  headers?: Record<string, { description: string; required?: boolean; schema: Record<string, unknown> }>;
}

/**
 * How fully the success bodies are described (the spec's marker): `modeled`, `envelope-only`
 * (outer keys only) or `unmodeled` (nested payloads not fully modeled).
 */
export type Completeness = 'modeled' | 'envelope-only' | 'unmodeled';

export interface RouteDef<
  P extends ZodType = ZodType,
  Q extends ZodType = ZodType,
  B extends ZodType = ZodType,
  A extends Access = Access,
> {
  method: Method;
  /** Express path syntax: `/api/v1/t/:pixelKey`. */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  access: A;
  /** Required on every bearer route: mountRoutes refuses to start without it. */
  scope?: RouteScope;
  params?: P;
  query?: Q;
  body?: B;
  /** Headers documented in OpenAPI and validated by the handler's own schema. */
  headers?: ZodType;
  /** Request body content types other than JSON that this route accepts (e.g. a beacon's text/plain). */
  extraBodyTypes?: string[];
  bodyLimitBytes?: number;
  /** The body is raw bytes (an upload), not JSON; the handler gets a Buffer. */
  rawBody?: boolean;
  /** The content types a raw body may be sent as, as the OpenAPI document lists them (default application/octet-stream). */
  rawBodyTypes?: readonly string[];
  /** Runs right after authentication, before the request is parsed: who may not call this must not learn more. */
  authorize?: (principal: A extends 'bearer' ? Principal : null) => Promise<void>;
  /**
   * Policy `required`: an Idempotency-Key (uuid) must be sent; the first response is replayed for
   * the same key and body. `optional`: the route reads a key of its own (the pixel).
   */
  idempotency?: 'required' | 'optional';
  /** A governed agent action, by its row in the action table: delegated agents must carry an approved step id and digest. */
  governedAction?: ActionName;
  responses: Record<number, ResponseDoc>;
  /** Defaults to `modeled`: every success body has a schema that describes all of it. */
  completeness?: Completeness;
  /**
   * Served by the lean router (`lean-router.ts`) when the request is plain: for the routes that
   * carry the volume. Its handler must use nothing of express's request or response.
   */
  lean?: true;
  /** Returns a result to send as JSON, or nothing when it wrote the response itself. */
  handler(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>, A>): Promise<HandlerResult | void>;
}

/** Identity function that keeps the schema types flowing into the handler. */
export function defineRoute<P extends ZodType, Q extends ZodType, B extends ZodType, A extends Access>(
  def: RouteDef<P, Q, B, A>,
): RouteDef {
  return def as unknown as RouteDef;
}
