import type { NextFunction, Request, Response } from 'express';
import { Problem, badRequest, internal, notFound, payloadTooLarge } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import { sendProblem } from '../http/problem';

interface BodyParserError {
  type?: string;
  limit?: number;
  status?: number;
}

/** Turns body-parser failures into our problems; they carry a `type` string. */
function fromBodyParser(err: BodyParserError): Problem | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return badRequest('The request body is not valid JSON.', undefined, 'malformed_json');
    case 'entity.too.large':
      return payloadTooLarge(err.limit ?? 0);
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

/** Text Postgres cannot store (a NUL character, say) is the client's mistake, not ours. */
function fromDatabase(err: unknown): Problem | null {
  const code = (err as { code?: unknown })?.code;
  if (code === '22021' || code === '22P05')
    return badRequest('A text field contains a character that cannot be stored (such as \\u0000).', undefined, 'invalid_text');
  return null;
}

export function unknownRoute(_req: Request, _res: Response, next: NextFunction): void {
  next(notFound());
}

/** The one place errors become responses. Only 5xx are logged at error level. */
export function errorHandler(logger: Logger) {
  // express recognises an error handler by its four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    void _next;
    let problem: Problem;
    if (err instanceof Problem) problem = err;
    else problem = fromBodyParser(err as BodyParserError) ?? fromDatabase(err) ?? internal();
    const log = (req as Request & { log?: Logger }).log ?? logger;
    if (problem.status >= 500) {
      log.error({ err: err instanceof Problem ? undefined : err, code: problem.code, requestId: res.locals.requestId }, problem.detail);
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendProblem(res, problem);
  };
}
