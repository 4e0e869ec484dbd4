import type { McpServer } from '@modelcontextprotocol/server';
import type { ToolListCache } from '../../shared/mcp/tool-list-cache';

/** Makes `server` answer tools/list from the process's cache, filled with the SDK's own answer the first time. */
export function serveToolListFrom(cache: ToolListCache, server: McpServer): void {
  const low = server.server;
  type Handler = (...args: unknown[]) => unknown;
  const set = low.setRequestHandler.bind(low) as (method: string, handler: Handler) => void;
  // Wrapped before the first tool is registered, which is when the SDK installs its list handler.
  low.setRequestHandler = ((method: string, handler: Handler) =>
    set(
      method,
      method === 'tools/list' ? (...args) => cache.get(() => handler(...args) as ReturnType<ToolListCache['get']>) : handler,
    )) as unknown as typeof low.setRequestHandler;
}
