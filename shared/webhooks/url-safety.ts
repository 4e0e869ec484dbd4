import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { badRequest } from '../errors';

/**
 * Where a webhook may be sent. Receivers must be public: https to a name or address that is
 * not private, loopback, link-local or otherwise reserved. With loopback allowed (development,
 * tests), loopback receivers may use http. Checked when a URL is saved (its literal address) and
 * again before every send, on the addresses the name resolves to then; the connection is pinned
 * to the address that was checked, so a name cannot resolve elsewhere in between.
 */
export interface UrlPolicy {
  allowLoopback: boolean;
}

const isLoopbackAddress = (addr: ipaddr.IPv4 | ipaddr.IPv6) => addr.range() === 'loopback';

function normalised(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress() ? (parsed as ipaddr.IPv6).toIPv4Address() : parsed;
}

/** Why this address may not receive webhooks, or null when it may. */
export function addressRefusal(address: string, policy: UrlPolicy): string | null {
  const addr = normalised(address);
  const range = addr.range();
  if (range === 'unicast') return null;
  if (range === 'loopback' && policy.allowLoopback) return null;
  return `the address is ${range}`;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Checks a URL as it is saved: its form, scheme and, when its host is an address, that address. */
export function checkWebhookUrl(raw: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('The webhook URL is not a URL.', [{ path: 'url', message: 'not a URL' }]);
  }
  const refuse = (why: string) => {
    throw badRequest(`The webhook URL is refused: ${why}.`, [{ path: 'url', message: why }], 'url_refused');
  };
  if (url.username || url.password) refuse('credentials in the URL');
  if (url.hash) refuse('a fragment');
  const host = hostOf(url);
  const literal = ipaddr.isValid(host) ? normalised(host) : null;
  if (url.protocol === 'http:') {
    const loopbackName = host === 'localhost';
    if (!policy.allowLoopback || !(loopbackName || (literal && isLoopbackAddress(literal))))
      refuse('http is allowed only to loopback in development');
  } else if (url.protocol !== 'https:') refuse('only https');
  if (literal) {
    const why = addressRefusal(host, policy);
    if (why) refuse(why);
  } else if (host === 'localhost' && !policy.allowLoopback) refuse('the address is loopback');
  return url;
}

export class UnsafeTarget extends Error {
  override readonly name = 'UnsafeTarget';
}

/**
 * Resolves a URL's host now and checks every address it resolves to; the first is the one to
 * connect to. Throws UnsafeTarget when any address is refused or nothing resolves.
 */
export async function resolveTarget(url: URL, policy: UrlPolicy): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostOf(url);
  const addresses = ipaddr.isValid(host)
    ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
    : await lookup(host, { all: true, verbatim: true }).catch(() => []);
  if (!addresses.length) throw new UnsafeTarget('the host does not resolve');
  for (const a of addresses) {
    const why = addressRefusal(a.address, policy);
    if (why) throw new UnsafeTarget(`refused: ${why}`);
  }
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
