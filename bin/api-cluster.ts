import cluster from 'node:cluster';
import type { Logger } from '../shared/logger';

/** What an API process tells its primary once it accepts connections. */
interface Listening {
  kind: 'api-listening';
  url: string;
}

const isListening = (m: unknown): m is Listening => (m as Listening | null)?.kind === 'api-listening';

/** In an API process forked by a primary: says that it now accepts connections. */
export function announceListening(url: string): void {
  process.send?.({ kind: 'api-listening', url } satisfies Listening);
}

export interface ApiProcesses {
  /** Resolves with the shared URL once every process listens; rejects if one dies before. */
  listening: Promise<string>;
  stop(): Promise<void>;
}

/**
 * In the primary: forks `count` API processes that share one listening port (the primary hands
 * each new connection to the next process in turn). Once all have started, one that dies is
 * replaced; one that dies while starting stops the whole start, since the next would too.
 */
export function forkApiProcesses(count: number, env: Record<string, string>, logger: Logger): ApiProcesses {
  let stopping = false;
  let started = false;
  const ready = new Set<number>();
  let resolveListening!: (url: string) => void;
  let rejectListening!: (err: Error) => void;
  const listening = new Promise<string>((resolve, reject) => {
    resolveListening = resolve;
    rejectListening = reject;
  });

  const fork = () => {
    const child = cluster.fork(env);
    child.on('message', (m: unknown) => {
      if (!isListening(m)) return;
      ready.add(child.id);
      if (!started && ready.size === count) {
        started = true;
        resolveListening(m.url);
      }
    });
    child.on('exit', (code, signal) => {
      ready.delete(child.id);
      if (stopping) return;
      if (!started) {
        rejectListening(new Error(`an API process exited while starting (code ${code}, signal ${signal})`));
        return;
      }
      logger.error({ childPid: child.process.pid, code, signal }, 'api process exited; starting another');
      setTimeout(() => stopping || fork(), 1000);
    });
  };
  for (let i = 0; i < count; i++) fork();

  return {
    listening,
    async stop() {
      stopping = true;
      const children = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
      await Promise.all(
        children.map(
          (w) =>
            new Promise<void>((resolve) => {
              if (w.isDead()) return resolve();
              w.once('exit', () => resolve());
              w.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
