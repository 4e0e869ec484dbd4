import net from 'node:net';
import type { AgentClient, AgentConfig, TaskResult } from '@adcp/sdk';
import { adcpSdk, adcpSdkIfLoaded } from './sdk';
import type { AdcpSeller } from '../../config/adcp-sellers';
import { adcpAdapterKey } from '../../config/adcp-sellers';

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

/** The SDK says so when the transport never reached an MCP endpoint (refused, DNS, no such path). */
const UNREACHABLE = /Failed to discover MCP endpoint|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH/;

/**
 * One configured seller: its client, and its capabilities kept for `capabilitiesTtlMs`. A fresh
 * SDK client per call: the SDK's client keeps conversation state, which concurrent jobs must not share.
 */
export class AdcpSellerConnection {
  readonly adapterKey: string;

  constructor(
    readonly seller: AdcpSeller,
    private readonly opts: { capabilitiesTtlMs: number; secrets?: NodeJS.ProcessEnv },
  ) {
    this.adapterKey = adcpAdapterKey(seller.key);
  }

  /** The mode of every request to this seller: a sandbox seller is reached only from sandbox bookings, and the reverse. */
  get mode(): 'sandbox' | 'live' {
    return this.seller.sandbox ? 'sandbox' : 'live';
  }

  /** The SDK client. The credential is read where the configuration says it is, at each call. */
  async client(): Promise<AgentClient> {
    const { AgentClient } = await adcpSdk();
    const secrets = this.opts.secrets ?? process.env;
    const token = this.seller.credentialEnv ? secrets[this.seller.credentialEnv] : undefined;
    const agent: AgentConfig = {
      id: this.adapterKey,
      name: this.seller.display ?? this.seller.key,
      agent_uri: this.seller.agentUrl,
      protocol: 'mcp',
      ...(token ? { auth_token: token } : {}),
    };
    return new AgentClient(agent, { validation: { requests: 'strict', responses: 'warn' } });
  }

  /**
   * Runs one SDK call; a transport that never reached the seller becomes SellerUnreachable.
   * Until the seller has answered once, its port is tried first: the SDK's client, finding a
   * seller it never reached down, falls back to an SSE connection whose retries never stop.
   */
  async call<T>(run: (client: AgentClient) => Promise<TaskResult<T>>): Promise<TaskResult<T>> {
    if (!this.reached) await this.probe();
    try {
      const result = await run(await this.client());
      this.reached = true;
      return result;
    } catch (err) {
      const message = (err as Error).message ?? '';
      if (UNREACHABLE.test(message) || UNREACHABLE.test(String((err as { cause?: { code?: string } }).cause?.code ?? ''))) {
        throw new SellerUnreachable(`${this.adapterKey} could not be reached; nothing was sent.`);
      }
      throw err;
    }
  }

  private reached = false;

  /** Whether anything listens where the seller should; SellerUnreachable (nothing sent) if not. */
  private probe(timeoutMs = 5_000): Promise<void> {
    const url = new URL(this.seller.agentUrl);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port, timeout: timeoutMs });
      const fail = (why: string) => {
        socket.destroy();
        reject(new SellerUnreachable(`${this.adapterKey} could not be reached (${why}); nothing was sent.`));
      };
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('timeout', () => fail(`no connection within ${timeoutMs} ms`));
      socket.once('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
    });
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
export function adcpConnections(sellers: readonly AdcpSeller[], opts: { capabilitiesTtlMs: number }): Map<string, AdcpSellerConnection> {
  return new Map(sellers.map((s) => [adcpAdapterKey(s.key), new AdcpSellerConnection(s, opts)]));
}

/** Closes the SDK's pooled connections to sellers, when the process stops. */
export async function closeSellerConnections(): Promise<void> {
  const sdk = adcpSdkIfLoaded();
  if (sdk) await (await sdk).closeMCPConnections().catch(() => undefined);
}
