import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
// In-process loader rather than the tsx wrapper, so signals reach our own handlers directly.
const NODE_ARGS = ['--import', 'tsx'];

/** Environment without the developer's own service settings, so each test says exactly what it sets. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn' };
  return { ...env, ...extra };
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one of our scripts (bin/*.ts) to completion. */
export function runScript(script: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_ARGS, path.join(ROOT, script), ...args], { env, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Started {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the first match of `pattern` in stdout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts a long-running script (the service) in its own process. */
export function startScript(script: string, env: NodeJS.ProcessEnv, args: string[] = []): Started {
  const child = spawn(process.execPath, [...NODE_ARGS, path.join(ROOT, script), ...args], { env, cwd: ROOT });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    output: () => out,
    async waitFor(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const m = out.match(pattern);
        if (m) return m;
        if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`timed out waiting for ${pattern} from ${script}:\n${out}`);
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
