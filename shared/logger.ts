import pino, { type Logger } from 'pino';

/** Paths that must never reach a log line: credentials and tokens. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'authorization',
  'token',
  'accessToken',
  'password',
  'secret',
  '*.token',
  '*.secret',
  '*.password',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      // With several API and worker processes per host, each line says which process wrote it.
      base: { service: 'flightdeck', pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

export type { Logger };
