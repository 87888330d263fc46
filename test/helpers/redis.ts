import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { freePort } from './ports.js';

/**
 * `redis.commandTimeoutMs` for tests that are not about a silent Redis. The product's 100 ms
 * default is right for production, but on a 2-core CI machine running the whole suite a
 * redis-server waits its turn for a core: measured 171–183 ms without a reply during a
 * 300-request burst, which in `open` mode sends part of the burst to the per-instance fallback
 * (CI saw 104 of rpm 100 admitted). Tests of silence and stalls set their own, short, value.
 */
export const REPLY_SILENCE_MS = 2000;

/** A private redis-server for one test file: never the shared one on 6379. */
export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Kills the server (SIGKILL: an outage, not a shutdown). */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.end();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`redis on ${port} did not start`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

function spawnRedis(port: number, dir: string, extraArgs: string[]): ChildProcess {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs],
    { stdio: 'ignore' },
  );
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts a private redis-server on a free port (never the shared one: tests kill and restart it). */
export async function startRedis(extraArgs: string[] = []): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-redis-'));
  let child = spawnRedis(port, dir, extraArgs);
  await waitForPort(port);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
    async restart() {
      child = spawnRedis(port, dir, extraArgs);
      await waitForPort(port);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}
