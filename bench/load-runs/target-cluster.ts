import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import cluster, { type Worker } from 'node:cluster';
import { announcePort, exitWithParent, isListeningMessage } from '../processes/child-lifecycle.js';
import { answerStatsRequests, ownStats, queryStats, sumStats } from '../processes/process-stats.js';

/**
 * The primary of a target run as one process per core (`--cluster`): it forks `workerCount`
 * copies of target.ts (same arguments and environment), which share one listening port
 * through Node's `cluster` module (round-robin accept in the primary, Node's default on
 * Linux). To the parent it looks like any single target: one `listening` message with the
 * shared port, stats requests answered with the sum over the primary and every worker.
 */

function stopWorkers(workers: readonly Worker[]): Promise<void> {
  return new Promise((resolve) => {
    let running = workers.filter((worker) => !worker.isDead()).length;
    if (running === 0) resolve();
    for (const worker of workers) {
      if (worker.isDead()) continue;
      worker.once('exit', () => {
        if (--running === 0) resolve();
      });
      // SIGTERM rather than disconnect: the worker closes its server and writes any CPU profile.
      worker.process.kill('SIGTERM');
    }
  });
}

export function runClusterPrimary(workerCount: number): void {
  // Each worker journals its ledger rows as under `server.workers` (src/cluster/primary.ts), so the journal's cost is in the figures.
  const journalDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-journal-'));
  const workers = Array.from({ length: workerCount }, (_, slot) => cluster.fork({ TOLLGATE_LEDGER_JOURNAL: join(journalDir, `worker-${slot}`) }));
  let stopping = false;
  let listening = 0;
  for (const worker of workers) {
    worker.on('message', (message: unknown) => {
      // listen(0) in cluster workers gives all of them the same port.
      if (isListeningMessage(message) && ++listening === workerCount) announcePort(message.port);
    });
    worker.once('exit', (code) => {
      if (stopping) return;
      console.error(`bench target: cluster worker exited (code ${String(code)}), stopping`);
      process.exit(1);
    });
  }
  answerStatsRequests(async (gc) => sumStats([ownStats(gc), ...(await Promise.all(workers.map((worker) => queryStats(worker, gc))))]));
  exitWithParent(() => {
    stopping = true;
    return stopWorkers(workers);
  });
}
