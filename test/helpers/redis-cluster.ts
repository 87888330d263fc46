import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort } from './ports.js';
import { startRedis, type TestRedis } from './redis.js';

const run = promisify(execFile);

/** A private 3-master Redis Cluster on loopback (no replicas), for one test file. */
export interface TestRedisCluster {
  /** Node URLs, as `redis.cluster` takes them. */
  readonly nodes: string[];
  stop(): Promise<void>;
}

/** A free port not already taken by an earlier node (client or bus port). */
async function freePortExcept(taken: ReadonlySet<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (!taken.has(port)) return port;
  }
}

async function clusterState(port: number): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'cluster', 'info']);
  return /cluster_state:(\w+)/.exec(stdout)?.[1] ?? 'unknown';
}

/** Polls until every node reports cluster_state:ok (slots assigned and gossip converged). */
async function waitForClusterOk(ports: number[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const states = await Promise.all(ports.map(clusterState));
    if (states.every((state) => state === 'ok')) return;
    if (Date.now() > deadline) throw new Error(`redis cluster not ok: ${states.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts three `redis-server --cluster-enabled yes` nodes on free ports (bus ports chosen
 * explicitly with --cluster-port, so port+10000 need not be free), joins them with
 * `redis-cli --cluster create`, and waits for cluster_state:ok on every node.
 */
export async function startRedisCluster(): Promise<TestRedisCluster> {
  const servers: TestRedis[] = [];
  const taken = new Set<number>();
  try {
    for (let i = 0; i < 3; i++) {
      // Each node's bus port is bound as soon as it starts, so later picks cannot reuse it.
      const busPort = await freePortExcept(taken);
      const server = await startRedis(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', String(busPort)]);
      servers.push(server);
      taken.add(busPort).add(server.port);
    }
    await run('redis-cli', ['--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-replicas', '0', '--cluster-yes']);
    await waitForClusterOk(servers.map((s) => s.port));
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    throw err;
  }
  return {
    nodes: servers.map((s) => s.url),
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}
