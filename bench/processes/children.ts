import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ListeningMessage } from './child-lifecycle.js';

/**
 * The parent's side of the benchmark's processes: every child is registered here, and is
 * killed when the run ends, fails, or is interrupted — no process outlives `npm run bench`.
 */

export interface RunningChild {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let interrupted = false;

/** True once a signal asked the run to stop (errors after that are expected, not news). */
function wasInterrupted(): boolean {
  return interrupted;
}
const tempDirs = new Set<string>();

// Children are .js when built, .ts when run through tsx (fork keeps execArgv).
export const runsFromSources = import.meta.url.endsWith('.ts');
const extension = runsFromSources ? '.ts' : '.js';

/**
 * The path of the module `name` (no extension) relative to `dir` as this run has it (.ts or
 * .js): callers pass their own `import.meta.dirname`, so a child's path follows its caller.
 */
export function modulePath(dir: string, name: string): string {
  return join(dir, name + extension);
}

/** The same as a file URL: what a child process is given to `--import`. */
export function moduleUrl(dir: string, name: string): string {
  return pathToFileURL(modulePath(dir, name)).href;
}

function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM (children exit cleanly, writing any CPU profile), then SIGKILL after a grace period. */
async function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(timer);
}

/** Forks `entry` (a modulePath) with the parent's Node flags and resolves once it reports the port it listens on. */
export function startChild(name: string, entry: string, args: string[], env: Record<string, string>, execArgv: string[] = []): Promise<RunningChild> {
  return startProcess(name, entry, args, { env, execArgv: [...process.execArgv, ...execArgv] });
}

export interface ProcessOptions {
  readonly env: Record<string, string>;
  /** Node's own flags for the child, in full (the parent's are not added). */
  readonly execArgv: string[];
  /** Working directory: another checkout's, for its target (`--baseline`). */
  readonly cwd?: string;
}

/**
 * Forks any module that speaks the children's protocol (a `listening` message with its port
 * over the IPC channel, child-lifecycle.ts), and resolves once it has.
 */
export function startProcess(name: string, modulePath: string, args: string[], options: ProcessOptions): Promise<RunningChild> {
  const child = fork(modulePath, args, {
    env: { ...process.env, ...options.env },
    execArgv: options.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  track(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 20 s`)), 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${String(code)}) before listening`));
    });
    child.on('message', (message: ListeningMessage) => {
      if (message.type !== 'listening') return;
      clearTimeout(timer);
      resolve({ name, port: message.port, url: `http://127.0.0.1:${message.port}`, child, stop: () => stopChild(child) });
    });
  });
}

/** A port nothing listens on now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on the loopback port; rejects after `deadline` (epoch ms). */
export function waitForPort(port: number, deadline: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.end();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listens on ${port}`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

/** A private redis-server that can be killed and started again on the same port (the soak's outage). */
export interface RestartableRedis extends RunningChild {
  /** SIGKILL: an outage, not a shutdown. Nothing is persisted, so it comes back empty. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory, once it is down. */
  restart(): Promise<void>;
}

async function spawnRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  track(child);
  const failed = new Promise<never>((_resolve, reject) => {
    child.once('error', (err) => reject(new Error(`redis-server could not start: ${err.message}`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited (code ${String(code)})`)));
  });
  await Promise.race([waitForPort(port, Date.now() + 10_000), failed]);
  failed.catch(() => undefined);
  return child;
}

/** A private, non-persisting redis-server on a free port (never the shared one on 6379). */
export async function startRedis(): Promise<RestartableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-redis-'));
  tempDirs.add(dir);
  let child = await spawnRedis(port, dir);
  return {
    name: 'redis',
    port,
    url: `redis://127.0.0.1:${port}`,
    get child() {
      return child;
    },
    stop: () => stopChild(child),
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
    async restart() {
      if (child.exitCode === null && child.signalCode === null) throw new Error('redis-server is still running: kill() it first');
      child = await spawnRedis(port, dir);
    },
  };
}

/** Stops every child still running (graceful first) and removes temporary directories. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((child) => stopChild(child)));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Last resort on a synchronous exit path: SIGKILL whatever is left. */
function killAllNow(): void {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

/** Makes sure children die with the run: on normal exit, on SIGINT/SIGTERM, and on a crash. */
export function killChildrenOnExit(): void {
  process.once('exit', killAllNow);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      interrupted = true;
      process.stderr.write(`\nbench: ${signal}, stopping children\n`);
      void stopAll().finally(() => process.exit(130));
    });
  }
  process.once('uncaughtException', (err) => {
    process.stderr.write(`bench: ${err.stack ?? String(err)}\n`);
    void stopAll().finally(() => process.exit(1));
  });
}

/**
 * Runs a command's main(): a failure that no interruption explains is printed with `name`
 * (`bench`, `soak`), every child is stopped, and the process exits 1.
 */
export function runMain(name: string, main: () => Promise<void>): void {
  main().catch(async (err: unknown) => {
    if (wasInterrupted()) return;
    process.stderr.write(`${name}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stopAll();
    process.exit(1);
  });
}
