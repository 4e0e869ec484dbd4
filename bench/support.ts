import autocannon from 'autocannon';

export interface Measurement {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

export const BENCH_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const BENCH_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);

/** One autocannon run against a URL on this machine. */
export async function measure(
  name: string,
  url: string,
  opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {},
): Promise<Measurement> {
  const result = await autocannon({
    url,
    method: opts.method ?? 'GET',
    headers: opts.headers ?? {},
    ...(opts.body ? { body: opts.body } : {}),
    connections: BENCH_CONNECTIONS,
    duration: BENCH_SECONDS,
  });
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
  };
}

/** Prints a measured route beside its baseline from the same run; the ratio is the figure that matters. */
export function printPair(service: Measurement, baseline: Measurement): void {
  const ratio = service.requestsPerSecond / baseline.requestsPerSecond;
  const row = (m: Measurement) =>
    `  ${m.name.padEnd(44)} ${String(m.requestsPerSecond).padStart(8)} req/s   p50 ${String(m.p50Ms).padStart(4)} ms   p99 ${String(m.p99Ms).padStart(4)} ms${m.non2xx ? `   (${m.non2xx} non-2xx)` : ''}`;
  console.log(row(service));
  console.log(row(baseline));
  console.log(`  ${'ratio service / bare express'.padEnd(44)} ${ratio.toFixed(2)}`);
  console.log('');
}
