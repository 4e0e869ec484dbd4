import type { ListToolsResult } from '@modelcontextprotocol/server';

/**
 * The answer to tools/list, made once per process. Every server built for a request registers
 * the same tools whoever asks (signed in or not, either protocol version), and turning their zod
 * schemas into JSON Schema is the most expensive thing a request without a tool call does.
 */
export class ToolListCache {
  /** How many times the list was made (once, unless making it failed). */
  builds = 0;
  private list?: Promise<ListToolsResult>;

  /** The list, made by `make` the first time; a failure is not kept. */
  get(make: () => ListToolsResult | Promise<ListToolsResult>): Promise<ListToolsResult> {
    this.list ??= Promise.resolve()
      .then(() => {
        this.builds++;
        return make();
      })
      .catch((err: unknown) => {
        this.list = undefined;
        throw err;
      });
    return this.list;
  }
}
