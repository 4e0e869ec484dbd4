import { createTestEnv, type TestEnv } from '../support/api';

let env: TestEnv;
beforeAll(async () => {
  env = await createTestEnv();
});
afterAll(() => env.close());

test('closing the workers twice closes them once, and the second close waits for the first', async () => {
  const workers = await env.workers();
  const first = workers.close();
  const second = workers.close();
  // Disconnecting a closed Redis connection again leaves a timer per connection keeping the process up.
  expect(second).toBe(first);
  await second;
  await expect(workers.close()).resolves.toBeUndefined();
  const timersLeft = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  await expect(workers.close()).resolves.toBeUndefined();
  expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(timersLeft);
});
