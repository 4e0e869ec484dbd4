import { fork } from 'node:child_process';
import path from 'node:path';
import { profileArgs } from '../support';

export interface FloorServer {
  url: string;
  pid: number;
  close(): Promise<void>;
}

/** Starts the HTTP floors (floor-server.ts) in a process of their own, on loopback. */
export async function startFloorServer(env: {
  contextBody: string;
  redisUrl: string;
  streamKey: string;
  databaseUrl: string;
}): Promise<FloorServer> {
  const child = fork(path.join(__dirname, 'floor-server.ts'), [], {
    execArgv: ['--import', 'tsx', ...profileArgs()],
    env: {
      PATH: process.env.PATH,
      FLOOR_CONTEXT_BODY: env.contextBody,
      FLOOR_REDIS_URL: env.redisUrl,
      FLOOR_STREAM_KEY: env.streamKey,
      FLOOR_DATABASE_URL: env.databaseUrl,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const port = await Promise.race([
    new Promise<number>((r) => child.once('message', (m: { port: number }) => r(m.port))),
    exited.then(() => Promise.reject(new Error('the floor server exited before listening'))),
  ]);
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async close() {
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      process.off('exit', killOnExit);
    },
  };
}
