import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports';
import { until } from './wait';

/** A Redis Cluster key's slot (CRC16/XMODEM of its hash tag, or of the whole key, mod 16384). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

export interface ClusterNodeProcess {
  address: string;
  port: number;
  process: ChildProcess;
}

export interface LocalRedisCluster {
  /** Every node's `host:port`, as REDIS_CLUSTER_NODES takes them. */
  seeds: string[];
  nodes: ClusterNodeProcess[];
  /** The node serving a slot now (its primary). */
  primaryOf(slot: number): Promise<ClusterNodeProcess>;
  /** SIGKILLs a node, as a crashed host would stop it. */
  kill(node: ClusterNodeProcess): Promise<void>;
  /** Resolves once every slot is served again (by whichever node) and the cluster says it is ok. */
  healthy(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

interface ShardNode {
  port: number;
  role: string;
  health: string;
}

/**
 * A Redis Cluster on loopback in a temporary folder: `primaries` primaries, each with `replicas`
 * replicas, no persistence, a short node timeout so that a failover takes about two seconds.
 */
export async function startRedisCluster(
  opts: { primaries?: number; replicas?: number; nodeTimeoutMs?: number } = {},
): Promise<LocalRedisCluster> {
  const { primaries = 3, replicas = 1, nodeTimeoutMs = 1000 } = opts;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightdeck-cluster-'));
  const nodes: ClusterNodeProcess[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => killed(n.process)));
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      const port = await freePort();
      const busPort = await freePort();
      // A folder each: a replica's full sync writes its RDB file into the node's folder.
      const nodeDir = path.join(dir, String(port));
      fs.mkdirSync(nodeDir);
      const child = spawn(
        'redis-server',
        [
          ...['--port', String(port), '--cluster-port', String(busPort), '--bind', '127.0.0.1'],
          ...['--cluster-enabled', 'yes', '--cluster-config-file', path.join(nodeDir, 'nodes.conf')],
          ...['--cluster-node-timeout', String(nodeTimeoutMs), '--dir', nodeDir, '--save', '', '--appendonly', 'no'],
        ],
        { stdio: 'ignore' },
      );
      nodes.push({ address: `127.0.0.1:${port}`, port, process: child });
    }
    await Promise.all(nodes.map((n) => until(`redis node ${n.port} to answer`, () => ping(n.port), 15_000)));
    const created = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', String(replicas), '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed:\n${created.stdout}\n${created.stderr}`);
  } catch (err) {
    await stop();
    throw err;
  }

  const live = () => nodes.filter((n) => n.process.exitCode === null && n.process.signalCode === null);
  const shards = async (): Promise<Array<{ slots: number[]; nodes: ShardNode[] }>> => {
    const client = new Redis(live()[0]!.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    try {
      const raw = (await client.call('CLUSTER', 'SHARDS')) as unknown[];
      return raw.map((shard) => {
        const s = pairs(shard as unknown[]);
        return {
          slots: (s.slots as unknown[]).map(Number),
          nodes: (s.nodes as unknown[][]).map((n) => {
            const f = pairs(n);
            return { port: Number(f.port), role: String(f.role), health: String(f.health) };
          }),
        };
      });
    } finally {
      client.disconnect();
    }
  };
  const cluster: LocalRedisCluster = {
    seeds: nodes.map((n) => n.address),
    nodes,
    async primaryOf(slot) {
      for (const shard of await shards()) {
        const covers = shard.slots.some((_, i) => i % 2 === 0 && slot >= shard.slots[i]! && slot <= shard.slots[i + 1]!);
        const primary = shard.nodes.find((n) => n.role === 'master' && n.health === 'online');
        if (covers && primary) return nodes.find((n) => n.port === primary.port)!;
      }
      throw new Error(`no primary serves slot ${slot}`);
    },
    async kill(node) {
      await killed(node.process);
    },
    async healthy(timeoutMs = 30_000) {
      await until(
        'the cluster to serve every slot',
        async () => {
          const states = await Promise.all(live().map((n) => clusterState(n.port)));
          if (!states.every((s) => s === 'ok')) return false;
          const ports = new Set(live().map((n) => n.port));
          const served = (await shards()).filter((s) =>
            s.nodes.some((n) => n.role === 'master' && n.health === 'online' && ports.has(n.port)),
          );
          return served.reduce((sum, s) => sum + rangeSize(s.slots), 0) === 16384;
        },
        timeoutMs,
      );
    },
    close: stop,
  };
  await cluster.healthy();
  // A replica can take over only once it has its primary's data.
  await until(
    'every replica to be in sync with its primary',
    async () => (await Promise.all(nodes.map((n) => replicaLink(n.port)))).every((link) => link !== 'down'),
    30_000,
  );
  return cluster;
}

function pairs(flat: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = flat[i + 1];
  return out;
}

const rangeSize = (slots: number[]) => slots.reduce((sum, _, i) => (i % 2 === 0 ? sum + slots[i + 1]! - slots[i]! + 1 : sum), 0);

async function withNode<T>(port: number, fn: (r: Redis) => Promise<T>, fallback: T): Promise<T> {
  const client = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } catch {
    return fallback;
  } finally {
    client.disconnect();
  }
}

const ping = (port: number) => withNode(port, async (r) => (await r.ping()) === 'PONG', false);
const clusterState = (port: number) =>
  withNode(port, async (r) => /cluster_state:(\w+)/.exec(String(await r.call('CLUSTER', 'INFO')))?.[1] ?? 'unknown', 'down');

/** A replica's link to its primary (`up`, `down`), or `primary`. */
const replicaLink = (port: number) =>
  withNode(
    port,
    async (r) => {
      const info = await r.info('replication');
      return /role:master/.test(info) ? 'primary' : (/master_link_status:(\w+)/.exec(info)?.[1] ?? 'down');
    },
    'down',
  );

async function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGKILL');
  await exited;
}
