import http from 'node:http';
import net from 'node:net';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  AdcpError,
  assertMediaBuyTransition,
  createAdcpServerFromPlatform,
  createIdempotencyStore,
  createInMemoryTaskRegistry,
  memoryBackend,
  serve,
  verifyApiKey,
  type TaskRegistry,
} from '@adcp/sdk/server';
import type {
  CreateMediaBuyRequest,
  CreateMediaBuySuccess,
  GetMediaBuyDeliveryRequest,
  GetMediaBuysRequest,
  GetProductsResponse,
  UpdateMediaBuyRequest,
} from '@adcp/sdk/types';
import { HARNESS_TOKEN } from './adcp-env';
import { creativeTools, type CreativeDesk } from './adcp-test-seller-creatives';

export {
  CLICKABLE_VIDEO_FORMAT,
  DISPLAY_FORMAT,
  HEADLINE_MAX,
  LANDING_SLOT,
  MIN_VIDEO_WIDTH,
  TITLED_VIDEO_FORMAT,
  VIDEO_FORMAT,
  VIDEO_SLOT,
} from './adcp-test-seller-creatives';
import { freePort } from './ports';
import { AdcpSellerConnection } from '../../shared/adapters/adcp/connection';

/**
 * A seller of our own on the SDK's server toolkit (createAdcpServerFromPlatform): the SDK's real
 * protocol layer (schemas, idempotency, tasks, RFC 9421-signed webhooks) with outcomes the test
 * chooses, per product. It listens on 127.0.0.1 only, in the test's process.
 */
export type Behaviour =
  /** create_media_buy answers completed at once. */
  | 'sync'
  /** Answers submitted; the task completes when the test calls `finish`. */
  | 'submitted'
  /** Answers submitted; tasks/get then says input-required with the seller's question. */
  | 'input-required'
  /** Answers submitted; tasks/get then says unknown. */
  | 'unknown'
  /** Answers submitted; the task then fails with the seller's reason. */
  | 'failed'
  /** Refuses at once with an AdCP error. */
  | 'refused'
  /** Answers after `slowMs`, longer than the buyer waits. */
  | 'slow';

export const INPUT_QUESTION = 'Send the signed insertion order for this campaign to io@seller.example.';
export const FAILURE_REASON = 'The publisher does not take this advertiser category.';

/** The catalogue: one product per behaviour, in pounds, and one priced in dollars. */
const CATALOGUE: Array<{ id: string; behaviour: Behaviour; currency: string }> = [
  { id: 'ctv_sync', behaviour: 'sync', currency: 'GBP' },
  { id: 'ctv_async', behaviour: 'submitted', currency: 'GBP' },
  { id: 'ctv_input', behaviour: 'input-required', currency: 'GBP' },
  { id: 'ctv_unknown', behaviour: 'unknown', currency: 'GBP' },
  { id: 'ctv_failed', behaviour: 'failed', currency: 'GBP' },
  { id: 'ctv_refused', behaviour: 'refused', currency: 'GBP' },
  { id: 'ctv_slow', behaviour: 'slow', currency: 'GBP' },
  { id: 'ctv_usd', behaviour: 'sync', currency: 'USD' },
];
export const PRICING_OPTION = 'cpm_fixed';
export const productRef = (productId: string) => ({ productId, pricingOptionId: PRICING_OPTION });

interface Buy {
  mediaBuyId: string;
  status: 'pending_creatives' | 'active' | 'paused' | 'canceled';
  packages: Array<{ package_id: string; product_id: string; budget: number; paused: boolean }>;
  /** The buyer's reference of each package: the platform takes one buy per reference. */
  buyerRefs: string[];
  startTime: string;
  endTime: string;
  /** What the seller's ad server runs: the buy as booked, with the changes the seller carried out. */
  served: { paused: boolean; canceled: boolean; budget: number; endTime: string };
}

interface UpdatePatch {
  paused?: boolean;
  canceled?: boolean;
  packages?: Array<{ package_id: string; budget?: number }>;
  end_time?: string;
}

interface Background {
  _registerBackground(taskId: string, completion: Promise<void>): void;
}
type Deferred = { promise: Promise<void>; resolve: () => void };
const deferred = (): Deferred => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

/** Listens on loopback whatever the SDK's serve() asks for (it listens on every interface). */
function onLoopback<T>(run: () => T): T {
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
    const callback = args.find((a) => typeof a === 'function') as (() => void) | undefined;
    return listen.call(this, { port: Number(args[0]), host: '127.0.0.1' }, callback);
  } as typeof listen;
  try {
    return run();
  } finally {
    net.Server.prototype.listen = listen;
  }
}

/** The SDK's server logs each request's tool registration and task read to the console: noise in a test run. */
const SDK_NOISE = /tool name|Tool registration|Specify Format for Tool Names|^\s+- (Tool name|Allowed characters)|^\[trace\./i;
for (const level of ['log', 'warn'] as const) {
  // eslint-disable-next-line no-console
  const write = console[level].bind(console);
  // eslint-disable-next-line no-console
  console[level] = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && SDK_NOISE.test(args[0])) return;
    write(...args);
  };
}

export interface TestSeller extends CreativeDesk {
  agentUrl: string;
  /** Where the seller publishes its webhook-signing keys (JWKS). */
  jwksUrl: string;
  /** The webhook-signing key, private part included (for tests that sign as the seller). */
  signingKey: { keyid: string; alg: 'ed25519'; privateKey: Record<string, unknown> & { kid: string; kty: string } };
  /** Every create_media_buy that reached the seller's platform (after the SDK's schema and idempotency layer). */
  creates: CreateMediaBuyRequest[];
  /** Every update_media_buy that reached it. */
  updates: Array<{ mediaBuyId: string; patch: UpdateMediaBuyRequest }>;
  buys: Map<string, Buy>;
  /** update_media_buy answers success but changes nothing (get_media_buys shows the old state). */
  drift: boolean;
  /** How long a `slow` product's create takes. */
  slowMs: number;
  /** Daily delivery per media buy, as the seller reports it now (the test may restate it). */
  delivery: Map<string, Array<{ date: string; impressions: number; spend: number }>>;
  /**
   * Reports delivery as some sellers do: the buy's totals to date only, whatever days were asked
   * for, with no daily breakdown and its own reporting period (from the buy's first day of delivery).
   */
  totalsOnly: boolean;
  /** Every get_media_buy_delivery that reached the seller. */
  deliveryAsks: GetMediaBuyDeliveryRequest[];
  /** Says its daily figures are final (`is_final` on each package's report), as a seller whose numbers are closed does. */
  reportsFinal: boolean;
  /** Ignores `canceled` on update_media_buy and answers success (Prebid's Sales Agent has no cancel path). */
  ignoresCancel: boolean;
  /**
   * Declares idempotency but its store keeps nothing (as after a restart with memory-only storage):
   * a resent request is carried out again, where its platform refuses a second buy for a package's
   * `buyer_ref` (CONFLICT).
   */
  forgetsReplies: boolean;
  /** Records budget and end-date changes (its read-back shows them) without applying them to what it serves. */
  ignoresFlightChanges: boolean;
  /**
   * Runs its ad server over `dates`: each buy it serves (not paused or canceled, within its served
   * flight) delivers an even share of its served budget a day, until that budget is spent.
   */
  simulate(dates: string[]): void;
  /** get_products buying modes the seller refuses (UNSUPPORTED_FEATURE), as some sellers refuse `wholesale`. */
  refusedBuyingModes: Set<string>;
  /** Every get_products buying mode asked for, in order. */
  productAsks: string[];
  /**
   * Takes bookings only for accounts declared with sync_accounts, named by the account id it
   * answered (a brand and operator alone is ACCOUNT_NOT_FOUND). With `accountStatus` other than
   * `active`, sync_accounts holds the account in that state.
   */
  syncedAccountsOnly: boolean;
  accountStatus: 'active' | 'pending_approval';
  /** The accounts declared with sync_accounts, by account id. */
  syncedAccounts: Map<string, { brand: { domain: string }; operator: string }>;
  /**
   * How update_media_buy answers: at once (null), or `submitted` with a task held open until the
   * test calls `finish`, when it carries the change out and completes ('complete') or fails with
   * the seller's reason, changing nothing ('fail').
   */
  updateTasks: null | 'complete' | 'fail';
  /** The tasks the seller holds, by product (an update's: its buy's product, and the buy), in order. */
  tasks: Array<{ taskId: string; productId: string; mediaBuyId?: string }>;
  /** Completes (or fails, per product) a task held open; all open ones without an id. */
  finish(taskId?: string): void;
  /** Stops listening (connections refused) and starts again on the same port. */
  down(): Promise<void>;
  up(): void;
  stop(): Promise<void>;
}

export async function startTestSeller(
  opts: { slowMs?: number; /** false: declares no idempotency support and replays nothing. */ idempotent?: boolean } = {},
): Promise<TestSeller> {
  const port = await freePort();
  const jwksPort = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const { privateKey } = generateKeyPairSync('ed25519');
  const kid = `seller-webhook-${randomBytes(4).toString('hex')}`;
  const jwk = privateKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; d: string };
  const publicJwk = {
    kid,
    kty: jwk.kty,
    crv: jwk.crv,
    x: jwk.x,
    alg: 'EdDSA',
    use: 'sig',
    key_ops: ['verify'],
    adcp_use: 'webhook-signing',
  };
  const signingKey = { keyid: kid, alg: 'ed25519' as const, privateKey: { ...publicJwk, d: jwk.d, key_ops: ['sign'] } };

  const inner = createInMemoryTaskRegistry();
  /** What tasks/get says of a task the test chose an outcome for that the SDK's registry cannot hold. */
  const statusOf = new Map<string, { status: 'input-required' | 'unknown'; message?: string }>();
  const registry: TaskRegistry = {
    create: (o) => inner.create(o),
    complete: (id, r) => inner.complete(id, r),
    fail: (id, e) => inner.fail(id, e),
    updateProgress: (id, p) => inner.updateProgress(id, p),
    awaitTask: (id) => inner.awaitTask(id),
    // The SDK's runtime tracks each task's background work through its own registry's hook.
    ...({
      _registerBackground: (id: string, done: Promise<void>) => (inner as never as Background)._registerBackground(id, done),
    } as object),
    async getTask<T>(id: string) {
      const record = await inner.getTask<T>(id);
      const chosen = statusOf.get(id);
      return record && chosen ? { ...record, status: chosen.status, ...(chosen.message ? { statusMessage: chosen.message } : {}) } : record;
    },
  };
  const gates = new Map<string, Deferred>();
  let counter = 0;
  const nextId = (prefix: string) => `${prefix}_${++counter}_${randomBytes(3).toString('hex')}`;

  const seller: TestSeller = {
    agentUrl: `${origin}/mcp`,
    jwksUrl: `http://127.0.0.1:${jwksPort}/.well-known/jwks.json`,
    signingKey,
    creates: [],
    updates: [],
    buys: new Map(),
    drift: false,
    slowMs: opts.slowMs ?? 5_000,
    delivery: new Map(),
    totalsOnly: false,
    deliveryAsks: [],
    reportsFinal: false,
    ignoresCancel: false,
    forgetsReplies: false,
    ignoresFlightChanges: false,
    simulate(dates) {
      for (const buy of seller.buys.values()) {
        const start = buy.startTime.slice(0, 10);
        const flightDays = Math.max(1, Math.round((Date.parse(buy.endTime) - Date.parse(buy.startTime)) / 86_400_000));
        const days = seller.delivery.get(buy.mediaBuyId) ?? [];
        for (const date of dates) {
          const served = buy.served;
          if (served.paused || served.canceled || date < start || Date.parse(`${date}T00:00:00Z`) >= Date.parse(served.endTime)) continue;
          if (days.some((d) => d.date === date)) continue;
          const spent = days.reduce((sum, d) => sum + d.spend, 0);
          const spend = Math.min(Math.round((served.budget / flightDays) * 100) / 100, Math.round((served.budget - spent) * 100) / 100);
          if (spend <= 0) continue;
          days.push({ date, impressions: Math.round((spend / 12) * 1000), spend });
        }
        seller.delivery.set(buy.mediaBuyId, days);
      }
    },
    refusedBuyingModes: new Set(),
    productAsks: [],
    syncedAccountsOnly: false,
    accountStatus: 'active',
    syncedAccounts: new Map(),
    creatives: [],
    formatListingFailures: 0,
    holdCreativesForReview: false,
    reviewStatus: new Map(),
    updateTasks: null,
    tasks: [],
    finish(taskId) {
      for (const [id, gate] of gates) if (!taskId || id === taskId) gate.resolve();
    },
    down: async () => undefined,
    up: () => undefined,
    stop: async () => undefined,
  };

  const book = (req: CreateMediaBuyRequest): CreateMediaBuySuccess => {
    for (const p of req.packages ?? []) {
      const ref = (p as { buyer_ref?: string }).buyer_ref;
      const booked = ref && [...seller.buys.values()].some((b) => b.buyerRefs.includes(ref));
      if (booked) throw new AdcpError('CONFLICT', { message: `A media buy already holds buyer_ref ${ref}.`, recovery: 'terminal' });
    }
    const mediaBuyId = nextId('mb');
    const packages = (req.packages ?? []).map((p) => ({
      package_id: nextId('pkg'),
      product_id: (p as { product_id: string }).product_id,
      budget: (p as { budget?: number }).budget ?? 0,
      paused: false,
    }));
    const budget = packages.reduce((sum, p) => sum + p.budget, 0);
    seller.buys.set(mediaBuyId, {
      mediaBuyId,
      status: 'pending_creatives',
      packages,
      buyerRefs: (req.packages ?? []).flatMap((p) => (p as { buyer_ref?: string }).buyer_ref ?? []),
      startTime: String(req.start_time),
      endTime: String(req.end_time),
      served: { paused: false, canceled: false, budget, endTime: String(req.end_time) },
    });
    return {
      media_buy_id: mediaBuyId,
      status: 'pending_creatives',
      confirmed_at: new Date().toISOString(),
      packages: packages.map((p) => ({ package_id: p.package_id, product_id: p.product_id, budget: p.budget })),
    } as CreateMediaBuySuccess;
  };

  /** An update_media_buy carried out on the buy (unless the seller drifts): its answer. */
  const carryOut = (buy: Buy, p: UpdatePatch) => {
    let status = buy.status;
    // A seller with no cancel path ignores `canceled` and answers success.
    if (p.canceled && !seller.ignoresCancel) status = 'canceled';
    else if (p.paused === true) status = 'paused';
    else if (p.paused === false) status = 'active';
    // A canceled buy takes no more changes, as the SDK's lifecycle has it: a second cancel is
    // NOT_CANCELLABLE, anything else INVALID_STATE.
    if (buy.status === 'canceled') assertMediaBuyTransition(buy.status, status);
    if (!seller.drift) {
      buy.status = status;
      if (status === 'canceled') buy.served.canceled = true;
      if (typeof p.paused === 'boolean') {
        for (const pkg of buy.packages) pkg.paused = p.paused;
        buy.served.paused = p.paused;
      }
      for (const change of p.packages ?? []) {
        const pkg = buy.packages.find((x) => x.package_id === change.package_id);
        if (!pkg) throw new AdcpError('PACKAGE_NOT_FOUND', { message: `Package ${change.package_id} not found`, recovery: 'terminal' });
        if (typeof change.budget === 'number') pkg.budget = change.budget;
      }
      if (p.end_time) buy.endTime = p.end_time;
      // Recorded above; carried to the ad server only by a seller that applies flight changes.
      if (!seller.ignoresFlightChanges) {
        buy.served.budget = buy.packages.reduce((sum, x) => sum + x.budget, 0);
        buy.served.endTime = buy.endTime;
      }
    }
    return { media_buy_id: buy.mediaBuyId, status };
  };

  const listing = (): GetProductsResponse => ({
    products: CATALOGUE.map((p) => ({
      product_id: p.id,
      name: `CTV ${p.behaviour} (${p.currency})`,
      description: `A CTV product that answers ${p.behaviour}.`,
      publisher_properties: [{ publisher_domain: 'seller.example', selection_type: 'all' }],
      channels: ['ctv'],
      format_ids: [{ agent_url: origin, id: 'video_15s' }],
      delivery_type: 'non_guaranteed',
      pricing_options: [{ pricing_option_id: PRICING_OPTION, pricing_model: 'cpm', currency: p.currency, fixed_price: 12 }],
      reporting_capabilities: {
        available_reporting_frequencies: ['daily'],
        expected_delay_minutes: 60,
        timezone: 'UTC',
        supports_webhooks: false,
        available_metrics: ['impressions', 'spend'],
        date_range_support: 'date_range',
      },
    })) as GetProductsResponse['products'],
  });

  const account = { id: 'acct_flightdeck', name: 'Flightdeck', status: 'active' as const, ctx_metadata: {} };
  const platform = {
    capabilities: {
      specialisms: ['sales-non-guaranteed'] as const,
      channels: ['ctv'] as const,
      pricingModels: ['cpm'] as const,
      config: {},
      // The SDK's comply_test_controller (below): tests drive the seller through AdCP's own test surface.
      compliance_testing: {},
    },
    accounts: {
      // One buying account: any brand reference, or (for tasks/get, which names none) the caller's key.
      resolve: async (ref: unknown, ctx?: { authInfo?: unknown; toolName?: string }) => {
        // The test controller requires a sandbox account: its own calls name one.
        if (ctx?.toolName === 'comply_test_controller')
          return (ref as { sandbox?: boolean })?.sandbox === true ? { ...account, mode: 'sandbox' as const } : null;
        if (!ref) return ctx?.authInfo ? account : null;
        if ('account_id' in (ref as object)) {
          const id = (ref as { account_id: string }).account_id;
          const synced = seller.syncedAccounts.get(id);
          return synced ? { ...account, brand: synced.brand } : null;
        }
        if (seller.syncedAccountsOnly) return null;
        return { ...account, brand: (ref as { brand: { domain: string } }).brand };
      },
      upsert: async (refs: Array<{ brand: { domain: string }; operator: string }>) =>
        refs.map((ref) => {
          const id = `acct_${ref.brand.domain}_${ref.operator}`;
          seller.syncedAccounts.set(id, { brand: ref.brand, operator: ref.operator });
          return {
            account_id: id,
            brand: ref.brand,
            operator: ref.operator,
            action: 'created' as const,
            status: seller.accountStatus,
            ...(seller.accountStatus === 'active' ? {} : { setup: { message: 'The seller reviews new advertisers within two days.' } }),
          };
        }),
    },
    sales: {
      getProducts: async (req: { buying_mode?: string }): Promise<GetProductsResponse> => {
        seller.productAsks.push(req.buying_mode ?? 'none');
        if (seller.refusedBuyingModes.has(req.buying_mode ?? '')) {
          throw new AdcpError('UNSUPPORTED_FEATURE', { message: `buying_mode ${req.buying_mode} is not offered`, recovery: 'correctable' });
        }
        return listing();
      },

      createMediaBuy: async (
        req: CreateMediaBuyRequest,
        ctx: { handoffToTask: (fn: (t: { id: string }) => Promise<unknown>) => never },
      ) => {
        seller.creates.push(req);
        const productId = (req.packages?.[0] as { product_id?: string } | undefined)?.product_id ?? '';
        const behaviour = CATALOGUE.find((p) => p.id === productId)?.behaviour;
        if (!behaviour) throw new AdcpError('PRODUCT_NOT_FOUND', { message: `No product ${productId}.`, recovery: 'correctable' });
        switch (behaviour) {
          case 'sync':
            return book(req);
          case 'slow':
            await new Promise((r) => setTimeout(r, seller.slowMs));
            return book(req);
          case 'refused':
            throw new AdcpError('POLICY_VIOLATION', { message: FAILURE_REASON, recovery: 'terminal' });
          default:
            return ctx.handoffToTask(async (task) => {
              seller.tasks.push({ taskId: task.id, productId });
              if (behaviour === 'input-required') statusOf.set(task.id, { status: 'input-required', message: INPUT_QUESTION });
              if (behaviour === 'unknown') statusOf.set(task.id, { status: 'unknown' });
              const gate = deferred();
              gates.set(task.id, gate);
              await gate.promise;
              gates.delete(task.id);
              if (behaviour === 'failed') throw new AdcpError('POLICY_VIOLATION', { message: FAILURE_REASON, recovery: 'terminal' });
              return book(req);
            });
        }
      },

      updateMediaBuy: async (buyId: string, patch: UpdateMediaBuyRequest) => {
        seller.updates.push({ mediaBuyId: buyId, patch });
        const buy = seller.buys.get(buyId);
        if (!buy) throw new AdcpError('MEDIA_BUY_NOT_FOUND', { message: `Media buy ${buyId} not found`, recovery: 'terminal' });
        const p = patch as UpdatePatch;
        const answer = seller.updateTasks;
        if (!answer) return carryOut(buy, p);
        // Still working on it: a task of its own, finished when the test says.
        const { taskId } = await registry.create({ tool: 'update_media_buy', accountId: account.id, hasWebhook: false } as never);
        seller.tasks.push({ taskId, productId: buy.packages[0]?.product_id ?? '', mediaBuyId: buyId });
        const gate = deferred();
        gates.set(taskId, gate);
        void gate.promise.then(async () => {
          gates.delete(taskId);
          if (answer === 'fail') await registry.fail(taskId, { code: 'POLICY_VIOLATION', message: FAILURE_REASON, recovery: 'terminal' });
          else await registry.complete(taskId, carryOut(buy, p));
        });
        return { status: 'submitted', task_id: taskId };
      },

      getMediaBuys: async (req: GetMediaBuysRequest) => ({
        media_buys: [...seller.buys.values()]
          .filter((b) => !req.media_buy_ids || req.media_buy_ids.includes(b.mediaBuyId))
          .map((b) => ({
            media_buy_id: b.mediaBuyId,
            status: b.status,
            currency: 'GBP',
            total_budget: b.packages.reduce((sum, p) => sum + p.budget, 0),
            packages: b.packages.map((p) => ({ package_id: p.package_id, product_id: p.product_id, budget: p.budget, paused: p.paused })),
          })),
      }),

      getMediaBuyDelivery: async (req: GetMediaBuyDeliveryRequest) => {
        seller.deliveryAsks.push(req);
        const ids = (req.media_buy_ids ?? []).filter((id) => seller.buys.has(id));
        const inRange = (d: { date: string }) =>
          seller.totalsOnly || ((!req.start_date || d.date >= req.start_date) && (!req.end_date || d.date <= req.end_date));
        const deliveries = ids.map((id) => {
          const days = (seller.delivery.get(id) ?? []).filter(inRange);
          const impressions = days.reduce((s, d) => s + d.impressions, 0);
          const spend = days.reduce((s, d) => s + d.spend, 0);
          const pkg = seller.buys.get(id)!.packages[0]!;
          return {
            media_buy_id: id,
            status: 'active' as const,
            totals: { impressions, spend },
            by_package: [
              {
                package_id: pkg.package_id,
                impressions,
                spend,
                pricing_model: 'cpm' as const,
                rate: 12,
                currency: 'GBP',
                ...(req.include_package_daily_breakdown && !seller.totalsOnly ? { daily_breakdown: days } : {}),
                ...(seller.reportsFinal ? { is_final: true } : {}),
              },
            ],
          };
        });
        const all = ids
          .flatMap((id) => seller.delivery.get(id) ?? [])
          .map((d) => d.date)
          .sort();
        return {
          reporting_period: seller.totalsOnly
            ? { start: `${all[0] ?? '2000-01-01'}T00:00:00Z`, end: new Date().toISOString() }
            : { start: `${req.start_date ?? '2000-01-01'}T00:00:00Z`, end: `${req.end_date ?? '2100-01-01'}T23:59:59Z` },
          currency: 'GBP',
          media_buy_deliveries: deliveries,
        };
      },

      ...creativeTools(seller, origin),
    },
  };

  const backend = memoryBackend();
  const store: typeof backend = {
    ...backend,
    get: (key) => (seller.forgetsReplies ? Promise.resolve(null) : backend.get(key)),
    putIfAbsent: (key, entry) => (seller.forgetsReplies ? backend.put(key, entry).then(() => true) : backend.putIfAbsent(key, entry)),
  };
  const idempotency = opts.idempotent === false ? 'disabled' : createIdempotencyStore({ backend: store, ttlSeconds: 86_400 });
  const agent = () =>
    createAdcpServerFromPlatform(
      platform as never,
      {
        name: 'flightdeck-test-seller',
        version: '1.0.0',
        taskRegistry: registry,
        idempotency,
        allowPrivateWebhookUrls: true,
        webhooks: { signerKey: signingKey as never, retries: { maxAttempts: 2, initialDelayMs: 100 } },
        resolveSessionKey: () => account.id,
        complyTest: complyTestController(seller),
      } as never,
    );

  let server: http.Server | null = null;
  seller.up = () => {
    server = onLoopback(() =>
      serve(agent as never, {
        port,
        onListening: () => undefined,
        authenticate: verifyApiKey({ keys: { [HARNESS_TOKEN]: { principal: 'flightdeck' } } }),
      }),
    );
  };
  seller.down = async () => {
    const s = server;
    server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  };
  seller.up();
  await until(() =>
    fetch(`${origin}/mcp`, { method: 'GET' }).then(
      () => true,
      () => false,
    ),
  );
  await warmUp(seller.agentUrl);
  seller.productAsks.length = 0;

  const jwks = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((r) => jwks.listen(jwksPort, '127.0.0.1', r));
  seller.stop = async () => {
    seller.finish();
    await seller.down();
    jwks.closeAllConnections();
    await new Promise<void>((r) => jwks.close(() => r()));
  };
  return seller;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 10_000; !(await check()); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error('the test seller did not start');
  }
}

/**
 * One listing asked through a connection like the workers': the first request in a process
 * compiles the SDK's schemas on both sides (seconds on a busy machine), which a test's first
 * booking would otherwise spend inside its supplier timeout. Nothing is recorded by the seller.
 */
async function warmUp(agentUrl: string): Promise<void> {
  const connection = new AdcpSellerConnection(
    { key: 'warm-up', agentUrl, credentialEnv: 'TOKEN', channels: ['ctv'], sandbox: false },
    { capabilitiesTtlMs: 0, secrets: { TOKEN: HARNESS_TOKEN } },
  );
  try {
    await connection.call((c) => c.getAdcpCapabilities({} as never));
    await connection.call((c) =>
      c.getProducts({ buying_mode: 'wholesale', account: { brand: { domain: 'warm.example' }, operator: 'warm.example' } } as never),
    );
  } finally {
    await connection.close();
  }
}

/**
 * The seller's `comply_test_controller` (AdCP's sandbox test surface, dispatched by the SDK):
 * `simulate_delivery` reports a day's figures for a buy (the day in the extension field `date`; a
 * day already reported is restated), and `force_media_buy_status` moves a buy as the seller's own
 * ad server would (a buy forced `active` serves again, whatever Flightdeck asked).
 */
function complyTestController(seller: TestSeller) {
  return {
    simulate: {
      delivery: (p: { media_buy_id: string; impressions?: number; reported_spend?: { amount: number }; date?: unknown }) => {
        if (!seller.buys.has(p.media_buy_id))
          throw new AdcpError('MEDIA_BUY_NOT_FOUND', { message: `Media buy ${p.media_buy_id} not found` });
        const date = typeof p.date === 'string' ? p.date : new Date().toISOString().slice(0, 10);
        const day = { date, impressions: p.impressions ?? 0, spend: p.reported_spend?.amount ?? 0 };
        const days = (seller.delivery.get(p.media_buy_id) ?? []).filter((d) => d.date !== date);
        seller.delivery.set(
          p.media_buy_id,
          [...days, day].sort((a, b) => a.date.localeCompare(b.date)),
        );
        const total = seller.delivery.get(p.media_buy_id)!.reduce((sum, d) => sum + d.spend, 0);
        return { success: true as const, simulated: day, cumulative: { spend: total } };
      },
    },
    force: {
      media_buy_status: (p: { media_buy_id: string; status: string }) => {
        const buy = seller.buys.get(p.media_buy_id);
        if (!buy) throw new AdcpError('MEDIA_BUY_NOT_FOUND', { message: `Media buy ${p.media_buy_id} not found` });
        const previous = buy.status;
        buy.status = p.status as never;
        buy.served.paused = p.status === 'paused';
        buy.served.canceled = p.status === 'canceled';
        return { success: true as const, previous_state: previous, current_state: p.status };
      },
    },
  };
}

/**
 * Calls the seller's `comply_test_controller` as a buyer-side harness does: over MCP through the
 * SDK's client (the connection the workers use), so the SDK's own dispatch runs. Throws on a
 * controller error.
 */
export async function controlSeller(
  seller: Pick<TestSeller, 'agentUrl'>,
  scenario: 'simulate_delivery' | 'force_media_buy_status',
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const connection = new AdcpSellerConnection(
    { key: 'test-controller', agentUrl: seller.agentUrl, credentialEnv: 'TOKEN', channels: ['ctv'], sandbox: true },
    { capabilitiesTtlMs: 0, secrets: { TOKEN: HARNESS_TOKEN } },
  );
  try {
    const account = { brand: { domain: 'flightdeck.example' }, operator: 'flightdeck.example', sandbox: true };
    const result = await connection.call((c) => c.executeTask('comply_test_controller', { scenario, params, account }));
    const data = (result as { data?: Record<string, unknown> }).data;
    if (!result.success || !data || data.success !== true)
      throw new Error(`comply_test_controller ${scenario} failed: ${JSON.stringify(result).slice(0, 500)}`);
    return data;
  } finally {
    await connection.close();
  }
}
