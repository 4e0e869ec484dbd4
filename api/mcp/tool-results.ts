import type { CallToolResult } from '@modelcontextprotocol/server';
import { Problem, internal } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import { problemBody } from '../middleware/problem';

/** One line a person (or a model reading only text) can act on; the full result is the structured content. */
function summarise(body: Record<string, unknown>): string {
  const parts = Object.entries(body).map(([k, v]) => {
    if (Array.isArray(v)) return `${v.length} ${k}`;
    if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const id = typeof o.id === 'string' ? ` ${o.id}` : '';
      const status = typeof o.status === 'string' ? ` (${o.status})` : '';
      return `${k}${id}${status}`;
    }
    return `${k}: ${String(v)}`;
  });
  return parts.join('; ') || 'done';
}

export function toolResult(body: unknown): CallToolResult {
  const structured = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : { result: body };
  return { structuredContent: structured, content: [{ type: 'text', text: summarise(structured) }] };
}

/** A refusal as a tool error that carries the problem details, `code` and `recovery` included. */
export function problemResult(body: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    structuredContent: body,
    content: [
      { type: 'text', text: `${String(body.title)} (${String(body.code)}, recovery: ${String(body.recovery)}): ${String(body.detail)}` },
    ],
  };
}

export function toolFailure(err: unknown, requestId: string, log: Logger, tool: string): CallToolResult {
  if (err instanceof Problem) {
    if (err.status >= 500) log.warn({ tool, code: err.code }, 'agent tool failed');
    // A tool result has no headers: when to try again (a rate limit, an outage) travels in the body.
    const retryAfter = Number(err.headers?.['retry-after']);
    return problemResult(problemBody(err, requestId, retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}));
  }
  log.error({ tool, err: { message: err instanceof Error ? err.message : String(err) } }, 'agent tool failed unexpectedly');
  return problemResult(problemBody(internal(), requestId));
}
