import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const ACCEPTABLE = /^[A-Za-z0-9._:-]{8,128}$/;

/** Keeps a caller's request id when it is sane (so traces join up), otherwise makes one. */
export function requestIdOf(req: Request): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && ACCEPTABLE.test(incoming) ? incoming : randomUUID();
}

export function requestId(req: Request, res: Response, next: NextFunction): void {
  const id = (req as Request & { id?: string }).id ?? requestIdOf(req);
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
}
