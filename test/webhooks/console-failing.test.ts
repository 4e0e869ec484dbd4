import { randomUUID } from 'node:crypto';
import { createTestEnv, type TestEnv } from '../support/api';
import { assignClient, grantStaff } from '../../shared/staff/staff-store';
import { startConsoleService, type ConsoleService } from '../console/support';
import { SUPPLIER_QUEUES, queuePrefix } from '../../shared/queues/names';

let env: TestEnv;
let service: ConsoleService;
beforeAll(async () => {
  env = await createTestEnv();
  service = await startConsoleService(env);
  await grantStaff(env.staff, 'staff-a');
});
afterAll(() => env.close());

async function subscription(workspace: string, url: string, failing: boolean) {
  await env.db('workspaces').insert({ id: workspace, name: workspace, pixel_key: randomUUID() }).onConflict('id').ignore();
  await env.db('webhook_subscriptions').insert({
    id: randomUUID(),
    workspace_id: workspace,
    url,
    event_types: ['campaign.paused'],
    secret: 'whsec_dGVzdA==',
    created_by: 'someone',
    failing_since: failing ? new Date() : null,
  });
}

test("staff see their clients' failing webhook subscriptions on the queues page, and no one else's", async () => {
  await subscription('client-a', 'https://a.example.com/failing', true);
  await subscription('client-a', 'https://a.example.com/healthy', false);
  await subscription('client-b', 'https://b.example.com/failing', true);
  await assignClient(env.staff, 'staff-a', 'client-a');
  const browser = await service.signIn({ user: 'staff-a', workspace: 'staff-org' });
  const page = await browser.page('/console/queues');
  expect(page.status).toBe(200);
  expect(page.html).toContain('Failing webhook subscriptions');
  expect(page.html).toContain('https://a.example.com/failing');
  expect(page.html).not.toContain('https://a.example.com/healthy');
  expect(page.html).not.toContain('b.example.com');
});

test('a queue whose counts Redis cannot give shows as unavailable, and the rest of the page stands', async () => {
  // A queue's waiting list that is not a list: Redis refuses the count (WRONGTYPE), as a real fault would.
  const [broken, healthy] = SUPPLIER_QUEUES;
  await env.redis.set(`${queuePrefix(env.prefix, broken!)}:${broken}:wait`, 'not a list');
  const browser = await service.signIn({ user: 'staff-a', workspace: 'staff-org' });
  const page = await browser.page('/console/queues');
  expect(page.status).toBe(200);
  const rowOf = (name: string) => new RegExp(`<tr[^>]*><td>${name.replace(/\./g, '\\.')}</td>(.*?)</tr>`).exec(page.html)?.[1];
  expect(rowOf(broken!)).toContain('counts unavailable');
  expect(rowOf(healthy!)).toMatch(/^(<td>\d+<\/td>){5}$/);
  expect(page.html).toContain('Failing webhook subscriptions');
});
