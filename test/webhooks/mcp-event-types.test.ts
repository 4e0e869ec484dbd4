import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createTestEnv, type TestEnv } from '../support/api';
import { call, connectAs, startMcpWorld } from '../mcp/support';

let env: TestEnv;
let client: Client;
beforeAll(async () => {
  env = await createTestEnv();
  const world = await startMcpWorld(env);
  ({ client } = await connectAs(world, { user: 'alice', workspace: 'acme' }));
});
afterAll(async () => {
  await client?.close();
  await env.close();
});

test('an assistant reads the webhook event catalogue through list_webhook_event_types, but cannot manage subscriptions', async () => {
  const result = await call(client, 'list_webhook_event_types', {});
  expect(result.isError).toBeFalsy();
  const { eventTypes } = result.structuredContent as { eventTypes: Array<{ type: string }> };
  expect(eventTypes.map((e) => e.type)).toContain('booking.line.status_changed');
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).filter((n) => n.includes('webhook'))).toEqual(['list_webhook_event_types']);
});
