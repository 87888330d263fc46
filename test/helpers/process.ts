import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './ports.js';
import { eventually } from './wait.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A gateway started as its own process (`src/main.ts` through tsx), as `npm start` would. */
export interface GatewayProcess {
  readonly child: ChildProcess;
  /** Everything printed so far on stdout and stderr. */
  output(): string;
  /** Resolves once `text` has been printed `times` times in all (once, unless told); rejects if the process exits first. */
  waitFor(text: string, times?: number): Promise<void>;
  /** Resolves with the exit code. */
  exited(): Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
}

/**
 * Writes a config file for a gateway process. Unless the YAML names a database, the process
 * gets a SQLite file of its own beside it: processes of parallel test files never share one.
 */
export function writeTempConfig(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-config-'));
  const path = join(dir, 'config.yaml');
  const database = /^database:/m.test(yaml) ? '' : `\ndatabase: { path: "${join(dir, 'tollgate.db')}" }\n`;
  writeFileSync(path, yaml + database);
  return path;
}

/** `wrapper`: a command the gateway runs under, e.g. `['prlimit', '--nofile=1024:1024']`. */
export function startGatewayProcess(env: Record<string, string>, wrapper: readonly string[] = []): GatewayProcess {
  const command = [...wrapper, process.execPath, '--import', 'tsx', 'src/main.ts'];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const printed = (text: string, times: number): boolean => output.split(text).length - 1 >= times;
  const waiters: Array<{ text: string; times: number; resolve: () => void }> = [];
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const waiter of [...waiters]) {
      if (printed(waiter.text, waiter.times)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let killedByTest = false;
  const exit = once(child, 'exit').then(([code, signal]) => {
    // A gateway that dies on its own is the finding, whatever the test then says: show why.
    // (A refused config exits 1 with one line and no stack: that is a test's expectation, not news.)
    if (!killedByTest && (signal !== null || output.includes('\n    at '))) process.stderr.write(`\ngateway process ${child.pid} exited on its own (code ${String(code)}, signal ${String(signal)}); its output:\n${output}\n`);
    return code as number | null;
  });
  return {
    child,
    output: () => output,
    waitFor(text, times = 1) {
      if (printed(text, times)) return Promise.resolve();
      return new Promise<void>((resolveWait, reject) => {
        waiters.push({ text, times, resolve: resolveWait });
        void exit.then((code) => reject(new Error(`gateway exited (${code}) before printing "${text}" ${times} time(s):\n${output}`)));
      });
    },
    exited: () => exit,
    kill: (signal = 'SIGTERM') => {
      killedByTest = true;
      child.kill(signal);
    },
  };
}

/** A gateway process and the port it listens on. */
export interface Instance {
  readonly proc: GatewayProcess;
  readonly port: number;
}

/**
 * `count` gateway processes on one config file (one deployment's instances), each on a free port,
 * resolved once every one answers /readyz 200. Two processes compiling TypeScript at once on a
 * busy 2-core machine can take longer than eventually's default 10 s.
 */
export async function startInstances(config: string, count: number): Promise<Instance[]> {
  const instances: Instance[] = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    instances.push({ port, proc: startGatewayProcess({ TOLLGATE_CONFIG: config, PORT: String(port), LOG_LEVEL: 'warn' }) });
  }
  await Promise.all(instances.map(({ port }) => eventually(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 50_000)));
  return instances;
}

/** Kills every instance with -9 and waits for each to exit. */
export async function killInstances(instances: readonly Instance[]): Promise<void> {
  for (const { proc } of instances) proc.kill('SIGKILL');
  await Promise.all(instances.map(({ proc }) => proc.exited()));
}
