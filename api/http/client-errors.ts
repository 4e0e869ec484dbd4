import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Problem, badRequest } from '../../shared/errors';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../middleware/problem';

/**
 * Requests Node refuses before express sees them (a head over its 16 KiB limit, bytes that
 * are not HTTP) still get a problem+json answer, not Node's bare status line. They never
 * reach the rate limiter: there is no request to count.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const problem =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new Problem(
            431,
            'request_header_too_large',
            'Request header fields too large',
            'The request line and headers exceed 16 KiB.',
            'correctable',
          )
        : badRequest('The request is not well-formed HTTP.', undefined, 'malformed_request');
    const requestId = randomUUID();
    const body = JSON.stringify(problemBody(problem, requestId));
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
        `content-type: ${PROBLEM_CONTENT_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}
