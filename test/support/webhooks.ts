import type { ApiClient, TestEnv } from './api';
import { post } from './bookings';

/**
 * Subscribes a workspace to event types through the API, as its owner would. Events are kept
 * only when a subscription wants them, so a test that reads a change's event subscribes first.
 * The default address refuses connections: the test reads the event, not its delivery.
 */
export async function subscribe(
  env: Pick<TestEnv, 'issuer'>,
  api: ApiClient,
  org: string,
  eventTypes: string[],
  url = 'http://127.0.0.1:9/events',
): Promise<{ id: string }> {
  const token = await env.issuer.token({ org, user: `${org}-owner` });
  const res = await post(api, token, '/api/v1/webhooks/subscriptions', { url, eventTypes });
  if (res.status !== 201) throw new Error(`subscribe failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { subscription: { id: string } }).subscription;
}
