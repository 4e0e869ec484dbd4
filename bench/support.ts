import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { processSeconds } from './machine-cpu';

export interface Measurement {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Requests answered 2xx over the whole run: for the pixel, the pageviews acknowledged. */
  ok2xx: number;
  requests: number;
  seconds: number;
  /** CPU time of the answering process over the run (this one, or the floor's), in microseconds. */
  cpuMicros: number;
}

/** CPU time of the measuring process per request, in microseconds. */
const cpuMicrosPerRequest = (m: Measurement) => Math.round(m.cpuMicros / Math.max(1, m.requests));

export const BENCH_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const BENCH_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
/**
 * A route and its baseline are measured in this many alternating slices of BENCH_SECONDS / n
 * each (service, baseline, service, ...): a change in the shared machine's load then falls on
 * both, not on whichever ran second.
 */
export const BENCH_SLICES = Math.max(1, Number(process.env.BENCH_SLICES ?? 3));

const AUTOCANNON_CLI = path.resolve(__dirname, '..', 'node_modules', 'autocannon', 'autocannon.js');
// The load generator gets the last core to itself where taskset exists, so it does not compete with the service.
const LOAD_CPU = process.env.BENCH_LOAD_CPU ?? '1';
const HAS_TASKSET = existsSync('/usr/bin/taskset');
export const LOAD_GENERATOR = HAS_TASKSET
  ? `autocannon CLI in its own process, taskset -c ${LOAD_CPU}`
  : 'autocannon CLI in its own process';

/** Figures collected during the run, for `--json`. */
export const figures: Array<Record<string, unknown>> = [];

export interface MeasureOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  seconds?: number;
  /** The process answering, when not this one (a floor in its own process): whose CPU is counted. */
  cpuPid?: number;
}

/** One autocannon run against a URL, from a separate process so the load generator is not measured. */
export async function measure(name: string, url: string, opts: MeasureOptions = {}): Promise<Measurement> {
  const seconds = opts.seconds ?? BENCH_SECONDS;
  const args = [AUTOCANNON_CLI, '-j', '-c', String(BENCH_CONNECTIONS), '-d', String(seconds), '-m', opts.method ?? 'GET'];
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}=${v}`);
  if (opts.body) args.push('-b', opts.body);
  args.push(url);
  const [cmd, cmdArgs] = HAS_TASKSET ? ['taskset', ['-c', LOAD_CPU, process.execPath, ...args]] : [process.execPath, args];
  const cpuOf = () => (opts.cpuPid ? processSeconds(opts.cpuPid) * 1e6 : (({ user, system }) => user + system)(process.cpuUsage()));
  const cpuBefore = cpuOf();
  const { stdout } = await promisify(execFile)(cmd, cmdArgs, { maxBuffer: 64 * 1024 * 1024 });
  const cpuMicros = cpuOf() - cpuBefore;
  const result = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    '2xx': number;
  };
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    ok2xx: result['2xx'],
    requests: result.requests.total,
    seconds,
    cpuMicros,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Slices of one target as one measurement: their totals, the median p50 and the worst p99. */
function combined(slices: Measurement[]): Measurement {
  const sum = (f: (m: Measurement) => number) => slices.reduce((a, m) => a + f(m), 0);
  const requests = sum((m) => m.requests);
  const cpuMicros = sum((m) => m.cpuMicros);
  return {
    name: slices[0]!.name,
    requestsPerSecond: Math.round(requests / sum((m) => m.seconds)),
    p50Ms: median(slices.map((m) => m.p50Ms)),
    p99Ms: Math.max(...slices.map((m) => m.p99Ms)),
    non2xx: sum((m) => m.non2xx),
    ok2xx: sum((m) => m.ok2xx),
    requests,
    seconds: sum((m) => m.seconds),
    cpuMicros,
  };
}

export interface Target {
  name: string;
  url: string;
  opts?: MeasureOptions;
}

/**
 * A route and its baseline in BENCH_SLICES alternating slices; the ratio is the median of the
 * slices' ratios. `aroundService` wraps each of the route's slices (a profiler, say).
 */
export async function measureAlternating(
  service: Target,
  baseline: Target,
  aroundService: <T>(run: () => Promise<T>) => Promise<T> = (run) => run(),
): Promise<{ service: Measurement; baseline: Measurement; ratio: number; sliceRatios: number[] }> {
  const seconds = Math.max(1, Math.round(BENCH_SECONDS / BENCH_SLICES));
  const ours: Measurement[] = [];
  const theirs: Measurement[] = [];
  for (let i = 0; i < BENCH_SLICES; i++) {
    ours.push(await aroundService(() => measure(service.name, service.url, { ...service.opts, seconds })));
    theirs.push(await measure(baseline.name, baseline.url, { ...baseline.opts, seconds }));
  }
  const sliceRatios = ours.map((m, i) => m.requestsPerSecond / theirs[i]!.requestsPerSecond);
  return { service: combined(ours), baseline: combined(theirs), ratio: median(sliceRatios), sliceRatios };
}

/**
 * Prints a measured route beside its baseline from the same run; the ratio (the median of the
 * alternating slices' ratios) is the figure that matters. Returns its figure.
 */
export function printPair(pair: {
  service: Measurement;
  baseline: Measurement;
  ratio: number;
  sliceRatios: number[];
}): Record<string, unknown> {
  const { service, baseline, ratio, sliceRatios } = pair;
  const row = (m: Measurement) =>
    `  ${m.name.padEnd(44)} ${String(m.requestsPerSecond).padStart(8)} req/s   p50 ${String(m.p50Ms).padStart(4)} ms   p99 ${String(m.p99Ms).padStart(4)} ms   ${String(cpuMicrosPerRequest(m)).padStart(5)} µs CPU/req${m.non2xx ? `   (${m.non2xx} non-2xx)` : ''}`;
  console.log(row(service));
  console.log(row(baseline));
  console.log(
    `  ${'ratio service / its floor'.padEnd(44)} ${ratio.toFixed(2)}   (median of ${sliceRatios.map((r) => r.toFixed(2)).join(', ')})`,
  );
  console.log('');
  const figure = {
    name: service.name,
    value: service.requestsPerSecond,
    baseline: baseline.requestsPerSecond,
    ratio,
    sliceRatios,
    p50Ms: service.p50Ms,
    p99Ms: service.p99Ms,
    non2xx: service.non2xx,
    cpuMicrosPerRequest: cpuMicrosPerRequest(service),
    baselineCpuMicrosPerRequest: cpuMicrosPerRequest(baseline),
  };
  figures.push(figure);
  return figure;
}

/**
 * Node options for a child the bench starts: with BENCH_CPU_PROF_DIR set, it writes a V8 CPU
 * profile there when it exits (NODE_OPTIONS may not carry --cpu-prof).
 */
export const profileArgs = (): string[] =>
  process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];

/**
 * With BENCH_CPU_PROF_DIR set, profiles this process's CPU from `start()` to `stop()` and writes
 * `<name>-<pid>.cpuprofile` there: a profile of the measured stretch alone, not of setting up.
 */
export function cpuProfiler(name: string): { start(): Promise<void>; stop(): Promise<void> } {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  let session: Session | undefined;
  return {
    async start() {
      if (!dir || session) return;
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    },
    async stop() {
      if (!dir || !session) return;
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(path.join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
      session = undefined;
    },
  };
}
