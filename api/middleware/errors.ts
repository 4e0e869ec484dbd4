import type { NextFunction, Request, Response } from 'express';
import { Problem, badRequest, internal, notFound, payloadTooLarge } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import { databaseProblem } from '../../shared/db/db-errors';
import { sendProblem } from './problem';
import { requestLog } from './request-log';

interface BodyParserError {
  type?: string;
  limit?: number;
  status?: number;
  expose?: boolean;
}

/** Turns body-parser failures into our problems; they carry a `type` string. */
function fromBodyParser(err: BodyParserError): Problem | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return badRequest('The request body is not valid JSON.', undefined, 'malformed_json');
    case 'entity.too.large':
      return payloadTooLarge(err.limit ?? 0);
    case 'parameters.too.many':
      // A form body (the console's) with more fields than any form has.
      return new Problem(
        413,
        'too_many_parameters',
        'Payload too large',
        'The form has more fields than this service accepts.',
        'correctable',
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return badRequest('The request body encoding is not supported.', undefined, 'unsupported_encoding');
    case 'request.aborted':
    case 'request.size.invalid':
      return badRequest('The request body was incomplete.', undefined, 'incomplete_body');
    default:
      return null;
  }
}

/**
 * The router and the body parser mark what is the client's fault with a 4xx `status` (a path
 * that is not valid percent-encoding, a body that is not the `Content-Encoding` it claims).
 * Those are the client's to correct, never a 500.
 */
function fromRequestDecoding(err: BodyParserError): Problem | null {
  if (err instanceof URIError && err.status === 400) {
    return badRequest('The request path is not valid percent-encoding.', undefined, 'malformed_path');
  }
  if (err.expose === true && err.status === 400) {
    return badRequest('The request body could not be decoded as its Content-Encoding says.', undefined, 'malformed_body_encoding');
  }
  return null;
}

/** What a client is told about any error: ours as they are, known failures classified, the rest an opaque 500. */
export function problemOf(err: unknown): Problem {
  if (err instanceof Problem) return err;
  return fromBodyParser(err as BodyParserError) ?? fromRequestDecoding(err as BodyParserError) ?? databaseProblem(err) ?? internal();
}

export function unknownRoute(_req: Request, _res: Response, next: NextFunction): void {
  next(notFound());
}

/**
 * Only 5xx are logged: a transient one (a dependency away, answered with retry-after) at warn,
 * since an outage would otherwise bury real faults under one error line per request; the rest
 * at error.
 */
export function logProblem(log: Logger, err: unknown, problem: Problem, requestId: unknown): void {
  if (problem.status < 500) return;
  const fields = { err: err instanceof Problem ? undefined : err, code: problem.code, requestId };
  if (problem.recovery === 'transient') log.warn(fields, problem.detail);
  else log.error(fields, problem.detail);
}

/** The one place errors of express's routes become responses. */
export function errorHandler(logger: Logger) {
  // express recognises an error handler by its four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    void _next;
    const problem = problemOf(err);
    logProblem(requestLog(req, logger), err, problem, res.locals.requestId);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendProblem(res, problem);
  };
}
