import { AsyncLocalStorage } from 'node:async_hooks';
import type { AgentClient, TaskResult } from '@adcp/sdk';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Logger } from '../../logger';
import { adcpSdk } from './sdk';
import { AdcpSellerSchema, adcpAdapterKey, type AdcpSeller, type AdcpSellerInput } from '../../config/adcp-sellers';

/** What Flightdeck keeps of a seller's get_adcp_capabilities answer. */
export interface AdcpCapabilities {
  majorVersions: number[];
  protocols: string[];
  /** Whether the seller honours idempotency_key, and for how long it replays an answer. */
  idempotency: { supported: boolean; replayTtlSeconds: number | null };
  /** Push delivery methods beside polling (get_media_buy_delivery is always available). */
  reportingDeliveryMethods: string[];
  /** Whether the seller offers sandbox accounts; null when it does not say. */
  sandboxAccounts: boolean | null;
  fetchedAt: string;
}

/** A creative format as the seller lists it: its id and the asset slots a creative fills. */
export interface SellerFormat {
  format_id: { agent_url?: string; id: string };
  name?: string;
  assets?: Array<{
    item_type?: string;
    asset_id?: string;
    asset_type?: string;
    asset_role?: string;
    required?: boolean;
    requirements?: { min_length?: number; max_length?: number; role?: string };
  }>;
}

/** The seller could not be reached at all: no request reached it, so nothing was done. */
export class SellerUnreachable extends Error {
  override readonly name = 'SellerUnreachable';
}

interface RawCapabilities {
  adcp?: { major_versions?: number[]; idempotency?: { supported?: boolean; replay_ttl_seconds?: number } };
  supported_protocols?: string[];
  account?: { sandbox?: boolean };
  media_buy?: { reporting_delivery_methods?: string[] };
}

export function capabilitiesOf(raw: RawCapabilities, now = new Date()): AdcpCapabilities {
  const idem = raw.adcp?.idempotency;
  return {
    majorVersions: raw.adcp?.major_versions ?? [],
    protocols: raw.supported_protocols ?? [],
    idempotency: {
      supported: idem?.supported === true,
      replayTtlSeconds: idem?.supported === true && typeof idem.replay_ttl_seconds === 'number' ? idem.replay_ttl_seconds : null,
    },
    reportingDeliveryMethods: raw.media_buy?.reporting_delivery_methods ?? [],
    sandboxAccounts: typeof raw.account?.sandbox === 'boolean' ? raw.account.sandbox : null,
    fetchedAt: now.toISOString(),
  };
}

/** Node's fetch says so when the request never reached the seller (refused, DNS, no route). */
const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/;
const unreachableCode = (err: unknown) => {
  const e = err as { code?: unknown; cause?: { code?: unknown; cause?: { code?: unknown } } } | null;
  return [e?.code, e?.cause?.code, e?.cause?.cause?.code].map((c) => String(c ?? '')).find((c) => UNREACHABLE.test(c)) ?? null;
};

/** Tools that change something at the seller: each send is counted and logged, and never repeated beneath us. */
const MUTATIONS = new Set(['create_media_buy', 'update_media_buy', 'sync_creatives', 'sync_accounts', 'sync_audiences']);

/** What a call to the seller may be given. */
export interface SellerCallOptions {
  /** Aborts the request in flight (its HTTP exchange is cut) and refuses to start one. */
  signal?: AbortSignal;
}

/**
 * One configured seller: one MCP connection of its own (a client of the MCP SDK over streamable
 * HTTP, no SSE fallback), shared by this process's calls to the seller, and its capabilities kept
 * for `capabilitiesTtlMs`. The AdCP SDK's client runs over that connection (`fromMCPClient`): its
 * own connection pool would retry a failed tool call once on a fresh connection, with the same
 * arguments, beneath the resend rule (a second booking at a seller without idempotency), and would
 * fall back to SSE with a reconnecting timer for a seller that fails the handshake. Here a request
 * goes out once, exactly when the caller says so; a failed connection is dropped and the next call
 * opens a new one (a new handshake, never the tool call again).
 */
export class AdcpSellerConnection {
  readonly adapterKey: string;
  /** Tool calls sent to the seller, by tool: what left this process, whatever came back. */
  readonly sent = new Map<string, number>();
  /** The seller answered that it has no sync_accounts: accounts are named by brand and operator alone. */
  syncAccountsUnsupported = false;
  /** Accounts declared to the seller (sync_accounts) and active, in this process, with the id it answered. */
  readonly declaredAccounts = new Map<string, string | null>();
  private mcp: Promise<McpClient> | null = null;
  private readonly callSignal = new AsyncLocalStorage<AbortSignal | undefined>();
  private closed = false;

  /** The seller as configured, its defaults filled in. */
  readonly seller: AdcpSeller;

  constructor(
    seller: AdcpSellerInput,
    private readonly opts: { capabilitiesTtlMs: number; secrets?: NodeJS.ProcessEnv; logger?: Logger },
  ) {
    this.seller = AdcpSellerSchema.parse(seller);
    this.adapterKey = adcpAdapterKey(seller.key);
  }

  /** The mode of every request to this seller: a sandbox seller is reached only from sandbox bookings, and the reverse. */
  get mode(): 'sandbox' | 'live' {
    return this.seller.sandbox ? 'sandbox' : 'live';
  }

  /** The credential is read where the configuration says it is, at each connection. */
  private headers(): Record<string, string> {
    const secrets = this.opts.secrets ?? process.env;
    const token = this.seller.credentialEnv ? secrets[this.seller.credentialEnv] : undefined;
    return {
      accept: 'application/json, text/event-stream',
      ...(token ? { authorization: `Bearer ${token}`, 'x-adcp-auth': token } : {}),
    };
  }

  /** The MCP connection, opened on first use; concurrent callers share one handshake. */
  private connection(): Promise<McpClient> {
    if (this.closed) return Promise.reject(new Error(`${this.adapterKey}: the connection is closed`));
    // Opened outside any call's context: one call's abort must not cut the connection the others share.
    this.mcp ??= this.callSignal.run(undefined, async () => {
      const transport = new StreamableHTTPClientTransport(new URL(this.seller.agentUrl), {
        requestInit: { headers: this.headers() },
        // Each HTTP exchange is cut when the call it carries is aborted.
        fetch: (input, init) => {
          const call = this.callSignal.getStore();
          const signal = call && init?.signal ? AbortSignal.any([call, init.signal]) : (call ?? init?.signal);
          this.sending(init?.body);
          return fetch(input, { ...init, ...(signal ? { signal } : {}) });
        },
        // A response stream that breaks is not resumed: the answer is lost, and the resend rule decides.
        reconnectionOptions: {
          maxRetries: 0,
          initialReconnectionDelay: 1_000,
          maxReconnectionDelay: 1_000,
          reconnectionDelayGrowFactor: 1,
        },
      });
      const client = new McpClient({ name: 'flightdeck', version: '1.0.0' });
      try {
        await client.connect(transport);
      } catch (err) {
        await client.close().catch(() => undefined);
        throw new SellerUnreachable(
          `${this.adapterKey} could not be reached (${unreachableCode(err) ?? (err as Error).message}); nothing was sent.`,
          {
            cause: err,
          },
        );
      }
      return client;
    });
    const opening: Promise<McpClient> = this.mcp;
    opening.catch(() => {
      if (this.mcp === opening) this.mcp = null;
    });
    return opening;
  }

  /** Drops the connection after a failure: the next call opens a new one. */
  private async drop(failed: Promise<McpClient> | null): Promise<void> {
    if (!failed || this.mcp !== failed) return;
    this.mcp = null;
    await (await failed.catch(() => null))?.close().catch(() => undefined);
  }

  /** An AdCP SDK client over this seller's connection. A fresh one per call: it keeps conversation state, which concurrent jobs must not share. */
  async client(mcp?: McpClient): Promise<AgentClient> {
    const { AgentClient } = await adcpSdk();
    return AgentClient.fromMCPClient(mcp ?? (await this.connection()), {
      agentId: this.adapterKey,
      agentName: this.seller.display ?? this.seller.key,
      validation: { requests: 'strict', responses: 'warn' },
    } as never);
  }

  /**
   * Runs `use` with an SDK client over this seller's connection, once. A seller that could not be
   * reached (the connection could not be opened, or a request was refused before it reached the
   * seller) is SellerUnreachable: nothing was sent. Any failure drops the connection, so the next
   * call opens a new one.
   */
  async withClient<R>(use: (client: AgentClient) => Promise<R>, options: SellerCallOptions = {}): Promise<R> {
    const { signal } = options;
    if (signal?.aborted) throw new SellerUnreachable(`${this.adapterKey}: the call was given up before it was sent; nothing was sent.`);
    const opening = this.connection();
    const client = await this.client(await opening);
    try {
      return await this.callSignal.run(signal, () => use(client));
    } catch (err) {
      await this.drop(opening);
      const code = unreachableCode(err);
      if (code) throw new SellerUnreachable(`${this.adapterKey} could not be reached (${code}); nothing was sent.`, { cause: err });
      throw err;
    }
  }

  /** One AdCP task call, once (see withClient). A transport failure the SDK turned into a failed result drops the connection too. */
  async call<T>(run: (client: AgentClient) => Promise<TaskResult<T>>, options: SellerCallOptions = {}): Promise<TaskResult<T>> {
    const result = await this.withClient(run, options);
    if (result.status === 'failed' && !result.adcpError) {
      await this.drop(this.mcp);
      const code = UNREACHABLE.exec(String(result.error ?? ''))?.[0];
      if (code) throw new SellerUnreachable(`${this.adapterKey} could not be reached (${code}); nothing was sent.`);
    }
    return result;
  }

  /** Counts (and, for changes, logs) each tool call as it leaves for the seller. */
  private sending(body: unknown): void {
    if (typeof body !== 'string' || !body.includes('"tools/call"')) return;
    let message: { method?: string; params?: { name?: unknown; arguments?: { idempotency_key?: unknown } } };
    try {
      message = JSON.parse(body) as typeof message;
    } catch {
      return;
    }
    const tool = message.method === 'tools/call' && typeof message.params?.name === 'string' ? message.params.name : null;
    if (!tool) return;
    const sends = (this.sent.get(tool) ?? 0) + 1;
    this.sent.set(tool, sends);
    if (!MUTATIONS.has(tool)) return;
    const key = message.params?.arguments?.idempotency_key;
    this.opts.logger?.info(
      { adapterKey: this.adapterKey, tool, idempotencyKey: typeof key === 'string' ? key : null, sends },
      'sending a change to the seller',
    );
  }

  /** Closes this seller's connection (the process is stopping, or the seller is no longer wanted). */
  async close(): Promise<void> {
    this.closed = true;
    const open = this.mcp;
    this.mcp = null;
    await (await open?.catch(() => null))?.close().catch(() => undefined);
  }

  /** The seller's capabilities, fetched once per TTL (concurrent callers share one fetch). */
  capabilities(now = Date.now()): Promise<AdcpCapabilities> {
    return this.remembered('capabilities', now, async () => {
      const result = await this.call((c) => c.getAdcpCapabilities({} as never));
      if (result.status !== 'completed') throw new Error(`${this.adapterKey} did not answer get_adcp_capabilities: ${result.status}`);
      return capabilitiesOf(result.data as RawCapabilities);
    });
  }

  /** The capabilities last fetched, if any (for showing without asking the seller). */
  lastCapabilities(): AdcpCapabilities | null {
    return (this.memos.get('capabilities')?.value as AdcpCapabilities | undefined) ?? null;
  }

  /**
   * The creative formats the seller lists (list_creative_formats), kept for the TTL. A seller
   * that lists none has an empty list; one that does not answer (or offer the tool) has an
   * empty list this time only, and is asked again next time.
   */
  async creativeFormats(now = Date.now()): Promise<SellerFormat[]> {
    try {
      return await this.remembered('formats', now, async () => {
        const result = await this.call((c) => c.listCreativeFormats({} as never));
        if (result.status !== 'completed') throw new Error(`list_creative_formats answered ${result.status}`);
        return ((result.data as { formats?: SellerFormat[] }).formats ?? []).filter((f) => typeof f?.format_id?.id === 'string');
      });
    } catch (err) {
      if (err instanceof SellerUnreachable) throw err;
      return [];
    }
  }

  private readonly memos = new Map<string, { at: number; value: unknown }>();
  private readonly fetching = new Map<string, Promise<unknown>>();

  private async remembered<T>(name: string, now: number, fetch: () => Promise<T>): Promise<T> {
    const memo = this.memos.get(name);
    if (memo && now - memo.at < this.opts.capabilitiesTtlMs) return memo.value as T;
    let pending = this.fetching.get(name) as Promise<T> | undefined;
    if (!pending) {
      pending = fetch()
        .then((value) => {
          this.memos.set(name, { at: Date.now(), value });
          return value;
        })
        .finally(() => this.fetching.delete(name));
      this.fetching.set(name, pending);
    }
    return pending;
  }
}

/** One connection per configured seller, by adapter key. */
export function adcpConnections(
  sellers: readonly AdcpSeller[],
  opts: { capabilitiesTtlMs: number; logger?: Logger },
): Map<string, AdcpSellerConnection> {
  return new Map(sellers.map((s) => [adcpAdapterKey(s.key), new AdcpSellerConnection(s, opts)]));
}

/** Closes the sellers' connections, when the process stops. */
export async function closeSellerConnections(connections: Iterable<AdcpSellerConnection>): Promise<void> {
  await Promise.all([...connections].map((c) => c.close()));
}
