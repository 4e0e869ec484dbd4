import net from 'node:net';
import { AdcpSellerConnection, SellerUnreachable } from '../../shared/adapters/adcp/connection';
import { freePort } from '../support/ports';
import { startTestSeller, type TestSeller } from '../support/adcp-test-seller';
import { HARNESS_TOKEN } from '../support/adcp-env';

/**
 * A seller that is down, or that accepts the connection and hangs up, when first asked: nothing is
 * sent, and nothing keeps trying behind our back (an SSE fallback would reconnect every few
 * seconds for the life of the process, against a seller we asked once). Each seller has its own
 * connection, so one seller's failure never touches calls to another.
 */
const opened: AdcpSellerConnection[] = [];
let healthy: TestSeller;
beforeAll(async () => {
  healthy = await startTestSeller({ slowMs: 1_500 });
});
afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()));
  await healthy?.stop();
});

const connectionTo = (key: string, agentUrl: string) => {
  const c = new AdcpSellerConnection(
    { key, agentUrl, credentialEnv: 'FLIGHTDECK_TEST_ADCP_TOKEN', channels: ['ctv'], sandbox: false },
    { capabilitiesTtlMs: 60_000, secrets: { FLIGHTDECK_TEST_ADCP_TOKEN: HARNESS_TOKEN } },
  );
  opened.push(c);
  return c;
};

/** A listener on `port` that counts connections and hangs up on each at once. */
async function hangUpListener(port: number) {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    connections: () => connections,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

test('a seller down at first contact is unreachable, and nothing reconnects to it afterwards', async () => {
  const port = await freePort();
  const connection = connectionTo('gone', `http://127.0.0.1:${port}/mcp`);
  await expect(connection.call((c) => c.getAdcpCapabilities({} as never))).rejects.toThrow(SellerUnreachable);
  expect(connection.sent.get('get_adcp_capabilities')).toBeUndefined();

  // The seller comes back: any connection now would be a retry of the call we gave up on.
  const listener = await hangUpListener(port);
  try {
    // Longer than an SSE client's reconnection delay (3 s).
    await new Promise((r) => setTimeout(r, 4_000));
    expect(listener.connections()).toBe(0);
  } finally {
    await listener.close();
  }
});

test('a seller that accepts and hangs up fails the call without sending the tool, leaves no reconnecting timer, and calls to another seller carry on', async () => {
  const port = await freePort();
  const listener = await hangUpListener(port);
  const broken = connectionTo('hangs-up', `http://127.0.0.1:${port}/mcp`);
  const other = connectionTo('healthy', healthy.agentUrl);
  try {
    // A call to the healthy seller is in flight (its slow product answers after 1.5 s) while the other fails.
    const inFlight = other.call((c) => c.getProducts({ buying_mode: 'wholesale' } as never));
    await expect(broken.call((c) => c.getAdcpCapabilities({} as never))).rejects.toThrow(SellerUnreachable);
    expect(broken.sent.size).toBe(0);
    await broken.close();
    expect((await inFlight).status).toBe('completed');

    const afterFailure = listener.connections();
    expect(afterFailure).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 4_000));
    // Nothing came back on its own: no fallback transport, no reconnection.
    expect(listener.connections()).toBe(afterFailure);
    // The healthy seller's connection is still usable.
    expect((await other.call((c) => c.getAdcpCapabilities({} as never))).status).toBe('completed');
  } finally {
    await listener.close();
  }
}, 30_000);
