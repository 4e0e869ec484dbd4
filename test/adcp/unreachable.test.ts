import net from 'node:net';
import { AdcpSellerConnection, SellerUnreachable, closeSellerConnections } from '../../shared/adapters/adcp/connection';
import { freePort } from '../support/ports';

/**
 * A seller that is down when first asked: nothing is sent, and nothing keeps trying behind our
 * back (the SDK's client would fall back to an SSE connection and retry it every few seconds for
 * the life of the process, against a seller we only asked once).
 */
afterAll(() => closeSellerConnections());

test('a seller down at first contact is unreachable, and nothing reconnects to it afterwards', async () => {
  const port = await freePort();
  const connection = new AdcpSellerConnection(
    { key: 'gone', agentUrl: `http://127.0.0.1:${port}/mcp`, channels: ['ctv'], sandbox: false },
    { capabilitiesTtlMs: 60_000 },
  );
  await expect(connection.call((c) => c.getAdcpCapabilities({} as never))).rejects.toThrow(SellerUnreachable);

  // The seller comes back: any connection now would be a retry of the call we gave up on.
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  try {
    // Longer than the SSE client's reconnection delay (3 s).
    await new Promise((r) => setTimeout(r, 4_000));
    expect(connections).toBe(0);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
