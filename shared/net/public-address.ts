import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where the service may send a request on someone else's say-so (a webhook receiver, a client's
 * metadata document, a page a job visits): public addresses only. https to a name or address that
 * is not private, loopback, link-local or otherwise reserved; with loopback allowed (development,
 * tests), loopback targets too, and those may use http. A URL is checked as given (its literal
 * address), and again just before connecting, on every address its name resolves to then; the
 * connection is pinned to the address that was checked, so a name cannot resolve elsewhere in
 * between.
 */
export interface AddressPolicy {
  allowLoopback: boolean;
}

/** A target the policy refuses, or one that cannot be reached to be checked. */
export class UnsafeTarget extends Error {
  override readonly name = 'UnsafeTarget';
}

function normalised(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

/** Why a request may not go to this address, or null when it may. */
export function addressRefusal(address: string, policy: AddressPolicy): string | null {
  const range = normalised(address.replace(/^\[|\]$/g, '')).range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && policy.allowLoopback) return null;
  return `the address is ${range}`;
}

export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Whether a host (name or address) is a loopback one: `localhost`, 127.0.0.0/8, ::1 (mapped or not). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  return ipaddr.isValid(bare) && normalised(bare).range() === 'loopback';
}

/** Whether the URL names this machine: `localhost` or a loopback address. */
export const isLoopbackUrl = (url: URL) => isLoopbackHost(hostOf(url));

/** Whether a host is an address literal rather than a name. */
export const isAddressLiteral = (host: string) => ipaddr.isValid(host.replace(/^\[|\]$/g, ''));

/**
 * Why a request may not go to this URL as written (its scheme, credentials, literal address),
 * or null when it may. Names are checked when they are resolved (`resolvePublicTarget`).
 */
export function urlRefusal(url: URL, policy: AddressPolicy): string | null {
  if (url.username || url.password) return 'credentials in the URL';
  const host = hostOf(url);
  const literal = ipaddr.isValid(host);
  if (url.protocol === 'http:') {
    if (!policy.allowLoopback || !isLoopbackUrl(url)) return 'http is allowed only to loopback in development';
  } else if (url.protocol !== 'https:') return 'only https';
  if (literal) return addressRefusal(host, policy);
  if (host === 'localhost' && !policy.allowLoopback) return 'the address is loopback';
  return null;
}

export interface Target {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves a host now and checks every address it resolves to (a literal address is checked as
 * it is); the first is the one to connect to. Throws UnsafeTarget when any address is refused or
 * nothing resolves: a name with one private address among public ones is refused whole.
 */
export async function resolvePublic(host: string, policy: AddressPolicy): Promise<Target> {
  const bare = host.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(bare)
    ? [{ address: bare, family: ipaddr.parse(bare).kind() === 'ipv6' ? 6 : 4 }]
    : await lookup(bare, { all: true, verbatim: true }).catch(() => []);
  if (!addresses.length) throw new UnsafeTarget('the host does not resolve');
  for (const a of addresses) {
    const why = addressRefusal(a.address, policy);
    if (why) throw new UnsafeTarget(`refused: ${why}`);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A URL's host, resolved and checked as `resolvePublic` does. */
export const resolvePublicTarget = (url: URL, policy: AddressPolicy) => resolvePublic(hostOf(url), policy);

/** A DNS lookup for node's http(s) that answers only the address that was checked. */
export function pinnedLookup(target: Target): LookupFunction {
  return (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [target]);
    else cb(null, target.address, target.family);
  };
}
