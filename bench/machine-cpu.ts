/**
 * Where the machine's CPU went over a measured stretch, read from /proc (Linux): how busy all
 * cores were, and the CPU time of the service process, of PostgreSQL's and Redis's server
 * processes and of the bench itself. On a machine where all of them share a few cores, a
 * throughput ratio is a ratio of CPU per operation once the machine is busy; these figures
 * say whose CPU it is. Elsewhere (no /proc) every figure is null.
 */
import fs from 'node:fs';
import os from 'node:os';

const TICKS_PER_SECOND = 100;
/** The server processes counted by their command name (every backend of PostgreSQL, for one). */
const SERVERS = { postgres: 'postgres', redis: 'redis-server' } as const;

interface Snapshot {
  /** Jiffies of all cores: busy (not idle, not waiting for IO) and in all. */
  busy: number;
  all: number;
  /** CPU seconds so far, by part. */
  seconds: Record<string, number>;
}

export interface CpuShare {
  /** Share of all cores busy over the stretch, 0..1. */
  machineBusy: number;
  cores: number;
  /** CPU seconds over the stretch, by part (service, postgres, redis, bench, machine). */
  seconds: Record<string, number>;
}

const readable = fs.existsSync('/proc/stat');

/** utime + stime of a process (all its threads), in seconds; 0 once it has gone. */
export function processSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function serverSeconds(): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(Object.keys(SERVERS).map((k) => [k, 0]));
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let comm: string;
    try {
      comm = fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    for (const [part, name] of Object.entries(SERVERS)) if (comm === name) out[part]! += processSeconds(Number(entry));
  }
  return out;
}

function snapshot(servicePid: number | undefined): Snapshot {
  const [, ...jiffies] = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  const n = jiffies.slice(0, 8).map(Number);
  const all = n.reduce((a, b) => a + b, 0);
  const usage = process.cpuUsage();
  return {
    busy: all - n[3]! - n[4]!,
    all,
    seconds: {
      ...(servicePid ? { service: processSeconds(servicePid) } : {}),
      ...serverSeconds(),
      bench: (usage.user + usage.system) / 1e6,
      machine: (all - n[3]! - n[4]!) / TICKS_PER_SECOND,
    },
  };
}

/**
 * Starts counting; `stop()` returns the CPU spent since, or null where /proc cannot be read.
 * `servicePid` is a service child process (its threads included); without it, the service is
 * the bench process itself.
 */
export function machineCpu(servicePid?: number): { stop(): CpuShare | null } {
  const start = readable ? snapshot(servicePid) : null;
  return {
    stop() {
      if (!start) return null;
      const end = snapshot(servicePid);
      const seconds = Object.fromEntries(Object.entries(end.seconds).map(([k, v]) => [k, Math.max(0, v - (start.seconds[k] ?? 0))]));
      return { machineBusy: (end.busy - start.busy) / Math.max(1, end.all - start.all), cores: os.cpus().length, seconds };
    },
  };
}

/** `service 1.21 ms, postgres 1.60 ms, ...`: CPU per operation by part. */
export function perOperation(share: CpuShare, operations: number): Record<string, number> {
  return Object.fromEntries(Object.entries(share.seconds).map(([k, v]) => [k, (v * 1000) / Math.max(1, operations)]));
}

export const formatPerOperation = (perOp: Record<string, number>) =>
  Object.entries(perOp)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
