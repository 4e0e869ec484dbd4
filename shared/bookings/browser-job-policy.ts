import { findAdapter } from '../adapters/catalogue';
import { hostOf, isLoopbackHost } from '../net/public-address';

/**
 * Where a browser job may go: the one rule the API applies when a job is asked for and the browser
 * worker applies to every request the page makes. A supplier's official public sources are https
 * on its official hosts (or their subdomains). With the test-only loopback allowance, a job whose
 * address is on loopback (a supplier site a test serves) may use that one origin as well.
 */
export interface BrowserJobOrigins {
  /** Why the browser may not open this host and port for the job, or null when it may. */
  refusal(host: string, port: number, protocol: 'http:' | 'https:'): string | null;
}

const isOfficialHost = (host: string, hosts: readonly string[]) => hosts.some((h) => host === h || host.endsWith(`.${h}`));

const portOf = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80));

/** The origins a job asked of `adapterKey` at `supplierUrl` may reach. */
export function browserJobOrigins(adapterKey: string, supplierUrl: string, allowLoopback: boolean): BrowserJobOrigins {
  const hosts = findAdapter(adapterKey)?.officialSourceHosts ?? [];
  const own = new URL(supplierUrl);
  const ownLoopback = allowLoopback && isLoopbackHost(hostOf(own)) ? { host: hostOf(own), port: portOf(own) } : null;
  return {
    refusal(host, port, protocol) {
      const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
      if (ownLoopback && bare === ownLoopback.host && port === ownLoopback.port) return null;
      if (!isOfficialHost(bare, hosts)) return "not one of the supplier's official source hosts";
      if (protocol !== 'https:' || port !== 443) return "the supplier's official sources are https on port 443 only";
      return null;
    },
  };
}

/**
 * Why a job may not be asked for at this address, or null when it may: the address's own origin
 * must be one the job may reach, and it may carry no credentials (a browser job never signs in).
 */
export function supplierUrlRefusal(
  adapterKey: string,
  supplierUrl: string,
  allowLoopback: boolean,
): { code: 'unofficial_source' | 'credentials_in_url'; why: string } | null {
  const url = new URL(supplierUrl);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { code: 'unofficial_source', why: "the supplier's official sources are https only" };
  const why = browserJobOrigins(adapterKey, supplierUrl, allowLoopback).refusal(hostOf(url), portOf(url), url.protocol);
  if (why) return { code: 'unofficial_source', why };
  if (url.username || url.password)
    return { code: 'credentials_in_url', why: 'a browser job never signs in, so its address may carry no credentials' };
  return null;
}
