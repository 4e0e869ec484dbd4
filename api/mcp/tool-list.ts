import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * The answer to tools/list, made once per process. Every server built for a request registers
 * the same tools whoever asks (signed in or not), and turning their zod schemas into JSON
 * Schema is the most expensive thing a request without a tool call does.
 */
export class ToolListCache {
  /** How many times the list was made (once, unless making it failed). */
  builds = 0;
  private list?: Promise<ListToolsResult>;

  /** Makes `server` answer tools/list from the cache, filling it with the SDK's own answer the first time. */
  serve(server: McpServer): void {
    const low = server.server;
    const set = low.setRequestHandler.bind(low);
    // Wrapped before the first tool is registered, which is when the SDK installs its list handler.
    low.setRequestHandler = ((schema, handler) =>
      set(
        schema,
        (schema as unknown) === ListToolsRequestSchema
          ? (request, extra) => {
              this.list ??= Promise.resolve()
                .then(() => {
                  this.builds++;
                  return handler(request, extra) as ListToolsResult | Promise<ListToolsResult>;
                })
                .catch((err: unknown) => {
                  this.list = undefined;
                  throw err;
                });
              return this.list;
            }
          : handler,
      )) as typeof low.setRequestHandler;
  }
}
