import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where the service itself may connect on someone else's say-so (a webhook receiver, a page a
 * browser job opens, any URL a user or a supplier gave us): only public addresses. Private,
 * loopback, link-local (cloud metadata at 169.254.169.254 among them), unique-local, carrier-grade
 * NAT, multicast, reserved and unspecified addresses are refused. Development and tests may allow
 * loopback. A name is checked on every address it resolves to, at the moment of connecting, and the
 * connection is pinned to an address that was checked, so the name cannot resolve elsewhere in between.
 */
export interface AddressPolicy {
  allowLoopback: boolean;
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

function normalised(address: string): Parsed {
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

/** A URL's host as an address or name, without an IPv6 literal's brackets. */
export const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Whether a host (name or address) is a loopback one: `localhost`, 127.0.0.0/8, ::1 (mapped or not). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  return ipaddr.isValid(bare) && normalised(bare).range() === 'loopback';
}

/** Whether a host is an address literal rather than a name. */
export const isAddressLiteral = (host: string) => ipaddr.isValid(host.replace(/^\[|\]$/g, ''));

/** Why the service may not connect to this address, or null when it may. */
export function addressRefusal(address: string, policy: AddressPolicy): string | null {
  const range = normalised(address.replace(/^\[|\]$/g, '')).range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && policy.allowLoopback) return null;
  return `the address is ${range}`;
}

/** A host that is refused, or does not resolve: nothing was sent to it. */
export class UnsafeTarget extends Error {
  override readonly name = 'UnsafeTarget';
}

/**
 * Resolves a host now and checks every address it resolves to (a literal address is checked as it
 * is); the first is the one to connect to. Throws UnsafeTarget when any address is refused or nothing
 * resolves: a name with one private address among public ones is refused whole.
 */
export async function resolvePublic(host: string, policy: AddressPolicy): Promise<CheckedAddress> {
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
export const resolveTarget = (url: URL, policy: AddressPolicy) => resolvePublic(hostOf(url), policy);

/** A DNS lookup for node:http(s) and node:net that answers only the address already checked. */
export function pinnedLookup(target: CheckedAddress): LookupFunction {
  return (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: CheckedAddress[]) => void)(null, [target]);
    else cb(null, target.address, target.family);
  };
}
