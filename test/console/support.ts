import { loadDevIssuer, type DevIssuer, type DevTokenClaims } from '../../shared/auth/dev-issuer';
import { createTokenVerifier } from '../../shared/auth/verifier';
import type { TestApi, TestEnv } from '../support/api';
import { approve, draftCampaign, post, waitForBooking, type BookingBody, type PlanLineInput } from '../support/bookings';
import { SPENDER_PERMISSIONS, TEST_AUDIENCE, TEST_ISSUER } from '../support/issuer';
import { freePort } from '../support/ports';

export interface ConsoleService {
  api: TestApi;
  /** Where people open the console (the redirect URL the embedded authorization server knows). */
  base: string;
  issuer: DevIssuer;
  token(claims: Omit<DevTokenClaims, 'ttlSeconds'>): Promise<string>;
  /** A browser signed in through the console's own flow, at the development login. */
  signIn(who: Person): Promise<ConsoleBrowser>;
  launch(
    org: string,
    lines: PlanLineInput[],
    settled?: (b: BookingBody) => boolean,
    campaign?: Record<string, unknown>,
  ): Promise<BookingBody>;
}

export interface Person {
  user: string;
  workspace: string;
  permissions?: string[];
  /** The product the token is for (default the general one). */
  product?: string;
}

const CSRF = /name="_csrf" value="([^"]+)"/;

/** A cookie-jar browser at the console: pages as HTML, forms sent with the session's CSRF token. Follows nothing by itself. */
export class ConsoleBrowser {
  csrf = '';
  private readonly jar = new Map<string, string>();
  constructor(readonly base: string) {}

  async go(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.jar.size) headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      if (/max-age=0/i.test(c)) this.jar.delete(pair!.slice(0, i));
      else this.jar.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
    return res;
  }

  /** The value of a cookie this browser holds. */
  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  setCookie(name: string, value: string): void {
    this.jar.set(name, value);
  }

  /** GETs a page, following same-site redirects; remembers the page's CSRF token. */
  async page(path: string): Promise<{ status: number; url: string; html: string }> {
    let url = new URL(path, this.base).href;
    for (let hops = 0; hops < 5; hops++) {
      const res = await this.go(url);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        url = new URL(location, url).href;
        continue;
      }
      const html = await res.text();
      this.csrf = CSRF.exec(html)?.[1] ?? this.csrf;
      return { status: res.status, url, html };
    }
    throw new Error(`too many redirects from ${path}`);
  }

  /** Sends a console form as a browser would (its CSRF token unless given one), without following the answer. */
  form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
    return this.go(new URL(path, this.base).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', referer: `${this.base}/console`, ...headers },
      body: new URLSearchParams({ _csrf: this.csrf, ...fields }),
    });
  }
}

/**
 * The API as `npm start` runs it for the console: the development issuer for API tokens and
 * the embedded authorization server the console signs in with, at a base URL of its own.
 */
export async function startConsoleService(env: TestEnv, overrides: Record<string, string> = {}): Promise<ConsoleService> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const issuer = await loadDevIssuer(env.dataDir, TEST_AUDIENCE, TEST_ISSUER);
  const api = await env.api(
    { PORT: String(port), PUBLIC_BASE_URL: base, MCP_RESOURCE_URL: `${base}/mcp`, ...overrides },
    {
      auth: {
        verifier: createTokenVerifier({ issuer: issuer.issuer, audience: issuer.audience, jwks: issuer.jwks }),
        devIssuer: issuer,
        mode: 'development-issuer',
      },
    },
  );
  // A person may spend unless the test names the permissions (docs/architecture.md, "Who may spend").
  const token = (claims: Omit<DevTokenClaims, 'ttlSeconds'>) =>
    issuer.sign({ ...(claims.agent ? {} : { permissions: SPENDER_PERMISSIONS }), ...claims });
  return {
    api,
    base,
    issuer,
    token,
    async signIn(who) {
      const browser = new ConsoleBrowser(base);
      let res = await browser.go(`${base}/console/login?go=1`);
      for (let hops = 0; hops < 12; hops++) {
        if (res.status === 200) {
          const action = /<form method="post" action="([^"]+\/login)"/.exec(await res.text())?.[1];
          if (!action) throw new Error('sign-in: no login form');
          res = await browser.go(new URL(action, base).href, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              user: who.user,
              workspace: who.workspace,
              product: who.product ?? 'flightdeck',
              channels: '',
              permissions: (who.permissions ?? []).join(','),
            }),
          });
          continue;
        }
        const location = res.headers.get('location');
        if (!location || res.status < 300 || res.status >= 400) throw new Error(`sign-in: unexpected ${res.status} ${await res.text()}`);
        const next = new URL(location, base);
        if (next.pathname === '/console') {
          await browser.page('/console');
          return browser;
        }
        res = await browser.go(next.href);
      }
      throw new Error('sign-in: too many redirects');
    },
    async launch(org, lines, settled = () => true, campaign = {}) {
      const buyer = await token({ org, user: `${org}-buyer` });
      const { campaignId, planVersion } = await draftCampaign(api, buyer, lines, campaign);
      await approve(api, buyer, campaignId, planVersion);
      const res = await post(api, buyer, `/api/v1/campaigns/${campaignId}/launch`);
      if (res.status !== 202) throw new Error(`launch failed: ${res.status} ${await res.text()}`);
      const { booking } = (await res.json()) as { booking: BookingBody };
      return waitForBooking(api, buyer, booking.id, settled);
    },
  };
}
