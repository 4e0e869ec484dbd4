import ipaddr from 'ipaddr.js';
import { badRequest } from '../errors';
import { addressRefusal, hostOf, isLoopbackHost, type AddressPolicy } from '../net/public-address';

/**
 * Where a webhook may be sent. Receivers must be public (`net/public-address.ts`): https to a name
 * or address that is not private, loopback, link-local or otherwise reserved. With loopback allowed
 * (development, tests), loopback receivers may use http. Checked when a URL is saved (its literal
 * address) and again before every send, on the addresses the name resolves to then.
 */
export type UrlPolicy = AddressPolicy;

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
  const literal = ipaddr.isValid(host);
  if (url.protocol === 'http:') {
    if (!policy.allowLoopback || !isLoopbackHost(host)) refuse('http is allowed only to loopback in development');
  } else if (url.protocol !== 'https:') refuse('only https');
  if (literal) {
    const why = addressRefusal(host, policy);
    if (why) refuse(why);
  } else if (host === 'localhost' && !policy.allowLoopback) refuse('the address is loopback');
  return url;
}
