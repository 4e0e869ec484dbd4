import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page, type Route } from 'playwright-core';
import type { AddressPolicy } from '../../shared/net/public-address';
import type { BrowserJobOrigins } from '../../shared/bookings/browser-job-policy';
import type { RefusedRequest } from '../../shared/bookings/browser-job-schemas';
import type { PageField } from '../../shared/bookings/browser-worksheet';
import { startGuardProxy } from './guard-proxy';

/**
 * One visit of one page in a Chromium of its own: read-only by construction. The worker, not the
 * page, decides: every request other than GET and HEAD is aborted at the network layer, the page
 * may not navigate away from the page the job opened (a form submitted, a script's redirect),
 * downloads, popups, dialogs, WebSockets and service workers are refused, nothing is ever typed,
 * and every connection goes through the guard proxy and its address rules.
 */
export interface VisitLimits {
  timeoutMs: number;
  maxBytes: number;
  maxRequests: number;
}

export interface Visit {
  requestedUrl: string;
  finalUrl: string;
  httpStatus: number | null;
  title: string;
  observedAt: Date;
  screenshot: { png: Buffer; width: number; height: number; truncated: boolean };
  text: { value: string; truncated: boolean };
  /** The page's form fields, read for a preparation worksheet. */
  fields: PageField[];
  requests: { made: number; bytes: number; refused: RefusedRequest[] };
}

/** Why a visit produced no evidence: a stable code and words for the person who asked. */
export class VisitFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Chromium as Debian ships it, headless, with nothing running in the background that could call out. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
  '--dns-prefetch-disable',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
];

const VIEWPORT = { width: 1366, height: 900 };
/** Taller pages are captured down to this height (and said to be truncated). */
const MAX_SCREENSHOT_HEIGHT = 16_000;
const MAX_TEXT_CHARS = 500_000;
const SETTLE_MS = 3_000;
const LOAD_MS = 15_000;

/** The tunnel an https (or wss) address goes through: its host and port. */
function tunnelOf(address: string): string | null {
  try {
    const u = new URL(address);
    return u.protocol === 'https:' || u.protocol === 'wss:' ? `${u.hostname}:${u.port || 443}` : null;
  } catch {
    return null;
  }
}

const firstLine = (err: unknown) =>
  String((err as Error)?.message ?? err)
    .split('\n')[0]!
    .slice(0, 300);

export async function visitPage(o: {
  chromiumPath: string;
  url: string;
  origins: BrowserJobOrigins;
  policy: AddressPolicy;
  limits: VisitLimits;
  readFields: boolean;
}): Promise<Visit> {
  const deadline = Date.now() + o.limits.timeoutMs;
  const remaining = () => Math.max(1, deadline - Date.now());
  const proxy = await startGuardProxy({ origins: o.origins, policy: o.policy, maxBytes: o.limits.maxBytes });
  const profile = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'flightdeck-browser-'));
  const refused: RefusedRequest[] = [];
  let context: BrowserContext | undefined;
  let made = 0;
  let tooMany = false;
  let timedOut = false;
  /** The page's renderer crashed, or the browser exited under the job (not closed by us). */
  let crashed = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void context?.close().catch(() => undefined);
  }, o.limits.timeoutMs);
  /** What went wrong, once something did: a limit first, then the time, then what the browser said. */
  const failure = (err: unknown): VisitFailure => {
    if (err instanceof VisitFailure) return err;
    if (proxy.overLimit())
      return new VisitFailure('page_too_large', `The page and what it loaded passed the limit of ${o.limits.maxBytes} bytes.`);
    if (tooMany) return new VisitFailure('too_many_requests', `The page made more than ${o.limits.maxRequests} requests.`);
    if (timedOut || Date.now() >= deadline) return new VisitFailure('timed_out', `The job did not finish within ${o.limits.timeoutMs} ms.`);
    if (crashed) return new VisitFailure('browser_crashed', 'The browser crashed or exited while the job ran.');
    return new VisitFailure('navigation_failed', `The browser could not load the page: ${firstLine(err)}`);
  };
  try {
    try {
      context = await chromium.launchPersistentContext(profile, {
        executablePath: o.chromiumPath,
        headless: true,
        chromiumSandbox: false,
        args: CHROMIUM_ARGS,
        proxy: { server: proxy.url },
        acceptDownloads: false,
        serviceWorkers: 'block',
        viewport: VIEWPORT,
        locale: 'en-GB',
        timeout: remaining(),
      });
    } catch (err) {
      throw new VisitFailure('browser_unavailable', `The browser could not be started: ${firstLine(err)}`);
    }
    // Closed by anyone but us (the timer sets timedOut first; `finally` closes it after the outcome is known).
    context.on('close', () => void (timedOut || (crashed = true)));
    const page = context.pages()[0] ?? (await context.newPage());
    let opened = false;
    /** Refused requests are aborted; a refused navigation is answered 204, so the page stays as it was instead of becoming an error page. */
    const refusing = new Set<Promise<unknown>>();
    const refuse = (route: Route, reason: string, navigation = false) => {
      const r = route.request();
      if (refused.length < 50) refused.push({ method: r.method(), url: r.url().slice(0, 500), reason });
      const done = (navigation ? route.fulfill({ status: 204, body: '' }) : route.abort('blockedbyclient')).catch(() => undefined);
      refusing.add(done);
      return done.finally(() => refusing.delete(done));
    };
    await context.route('**/*', async (route) => {
      const request = route.request();
      const method = request.method();
      let frame: ReturnType<typeof request.frame> | null;
      try {
        frame = request.frame();
      } catch {
        frame = null;
      }
      const navigation = request.isNavigationRequest();
      if (method !== 'GET' && method !== 'HEAD') return refuse(route, 'only GET and HEAD: a browser job changes nothing', navigation);
      // A new window's first request comes before its frame exists.
      if (navigation && (!frame || frame.page() !== page)) return refuse(route, 'a browser job opens no other window', true);
      if (navigation && frame === page.mainFrame()) {
        if (opened) return refuse(route, 'the page may not navigate away: a browser job opens one page and follows nothing', true);
        opened = true;
      }
      made++;
      if (made > o.limits.maxRequests) {
        tooMany = true;
        return refuse(route, `more than ${o.limits.maxRequests} requests`, navigation);
      }
      return route.continue().catch(() => undefined);
    });
    // Requests the page made (redirect hops included): the proxy's refusals of anything else are the browser's own.
    const asked = new Set<string>();
    context.on('request', (r) => void asked.add(r.url()));
    await context.routeWebSocket(
      () => true,
      (ws) => {
        if (refused.length < 50) refused.push({ method: 'GET', url: ws.url().slice(0, 500), reason: 'a browser job opens no WebSocket' });
        return ws.close();
      },
    );
    context.on('page', (other) => void (other !== page && other.close().catch(() => undefined)));
    page.on('dialog', (d) => void d.dismiss().catch(() => undefined));
    page.on('download', (d) => {
      if (refused.length < 50) refused.push({ method: 'GET', url: d.url().slice(0, 500), reason: 'downloads are refused' });
      void d.cancel().catch(() => undefined);
    });
    /**
     * What the proxy refused of the page's own traffic: a plain request the page made (or sent with
     * its Referer or Origin, a redirect hop among them), or a tunnel to a host the page asked for or
     * refused for its address. Chromium's own background requests are refused too, but are no
     * evidence about the page.
     */
    const proxyRefusals = () =>
      proxy.refused
        .filter((r) =>
          r.method === 'CONNECT'
            ? /the address is/.test(r.reason) || [...asked].some((u) => tunnelOf(u) === tunnelOf(r.url))
            : r.fromPage || asked.has(r.url),
        )
        .map(({ method, url, reason }) => ({ method, url, reason }));
    page.on('crash', () => (crashed = true));

    let response;
    try {
      response = await page.goto(o.url, { waitUntil: 'commit', timeout: remaining() });
    } catch (err) {
      if (/download is starting/i.test(String((err as Error)?.message))) {
        throw new VisitFailure('download_refused', 'The address is a download, not a page; downloads are refused.');
      }
      // The navigation, or a redirect on its way, that the proxy refused.
      const stopped = proxyRefusals().find((r) => r.method !== 'CONNECT') ?? proxyRefusals()[0];
      if (stopped && !proxy.overLimit() && !tooMany && !timedOut) {
        const code = /does not resolve/.test(stopped.reason) ? 'unreachable' : 'address_refused';
        throw new VisitFailure(code, `The page (or a redirect on the way) went to ${stopped.url}, which was refused: ${stopped.reason}.`);
      }
      throw failure(err);
    }
    // Let the page load and its own scripts run their course, within the time left; what they try is refused
    // above. A page that starts another navigation while loading never fires its load event: no matter.
    const loading = { timeout: Math.min(LOAD_MS, remaining()) };
    await Promise.race([page.waitForLoadState('load', loading), page.waitForLoadState('networkidle', loading)]).catch(() => undefined);
    await page.waitForLoadState('networkidle', { timeout: Math.min(SETTLE_MS, remaining()) }).catch(() => undefined);
    if (proxy.overLimit() || tooMany || timedOut) throw failure(null);
    if (crashed) throw failure(null);
    // A navigation the page started just now is being refused: the page is evidence once it stays put.
    await Promise.allSettled([...refusing]);
    const observedAt = new Date();
    const title = await page.evaluate(() => (globalThis as unknown as { document: { title: string } }).document.title);
    const fullText = await page.evaluate(
      () => (globalThis as unknown as { document: { body?: { innerText: string } } }).document.body?.innerText ?? '',
    );
    const fields = o.readFields ? await readFields(page) : [];
    const size = await page.evaluate(() => {
      const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; scrollHeight: number } } }).document;
      return { width: d.documentElement.scrollWidth, height: d.documentElement.scrollHeight };
    });
    const truncated = size.height > MAX_SCREENSHOT_HEIGHT;
    const height = Math.min(Math.max(size.height, VIEWPORT.height), MAX_SCREENSHOT_HEIGHT);
    const width = Math.max(size.width, VIEWPORT.width);
    const png = await page.screenshot({
      type: 'png',
      fullPage: true,
      timeout: remaining(),
      ...(truncated ? { clip: { x: 0, y: 0, width, height } } : {}),
    });
    if (proxy.overLimit() || tooMany || timedOut) throw failure(null);
    return {
      requestedUrl: o.url,
      finalUrl: page.url(),
      httpStatus: response?.status() ?? null,
      title: title.slice(0, 500),
      observedAt,
      screenshot: { png, width, height, truncated },
      text: { value: fullText.slice(0, MAX_TEXT_CHARS), truncated: fullText.length > MAX_TEXT_CHARS },
      fields,
      requests: { made, bytes: proxy.bytes(), refused: [...refused, ...proxyRefusals()].slice(0, 50) },
    };
  } catch (err) {
    throw failure(err);
  } finally {
    clearTimeout(timer);
    await context?.close().catch(() => undefined);
    await proxy.close();
    await fs.promises.rm(profile, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The page's visible form fields, by the words a person would look for them by. */
function readFields(page: Page): Promise<PageField[]> {
  return page.$$eval('input, select, textarea', (els) =>
    els
      .map((el) => {
        const e = el as unknown as {
          type?: string;
          tagName: string;
          labels?: ArrayLike<{ textContent: string | null }> | null;
          getAttribute(n: string): string | null;
        };
        const type = (e.type ?? e.tagName).toLowerCase();
        const label =
          e.labels?.[0]?.textContent?.trim() ||
          e.getAttribute('aria-label') ||
          e.getAttribute('placeholder') ||
          e.getAttribute('name') ||
          e.getAttribute('id') ||
          '';
        return { label: label.replace(/\s+/g, ' ').slice(0, 200), type };
      })
      .filter((f) => f.label && !['hidden', 'submit', 'button', 'reset', 'image'].includes(f.type)),
  );
}
