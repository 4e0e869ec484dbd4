import { badRequest } from '../errors';
import { urlRefusal, type AddressPolicy } from '../net/public-address';

/**
 * Where a webhook may be sent: the public-address rules every outbound request on someone else's
 * say-so follows (`shared/net/public-address.ts`), checked when a URL is saved and again before
 * every send.
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
  const why = url.username || url.password ? 'credentials in the URL' : url.hash ? 'a fragment' : urlRefusal(url, policy);
  if (why) throw badRequest(`The webhook URL is refused: ${why}.`, [{ path: 'url', message: why }], 'url_refused');
  return url;
}
