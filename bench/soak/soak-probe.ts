import { announcePort } from '../processes/child-lifecycle.js';
import { waitForPort } from '../processes/children.js';
import { answerLoopDelayReadings } from '../processes/loop-delay.js';
import { answerStatsRequests, ownStats } from '../processes/process-stats.js';

/**
 * Preloaded into the gateway the soak drives (`node --import <this file> dist/src/main.js`), so
 * the soak runs the very entry point `npm start` runs — config file, signals, drain — and still
 * reads what the process costs over the fork IPC channel: memory (bench/processes/process-stats.ts) and
 * event-loop delay (bench/processes/loop-delay.ts). It tells the parent the port once main.ts listens on
 * it (PORT, chosen by the parent), and turns a parent that vanished into a SIGTERM (a drain).
 */

const port = Number(process.env.PORT);

if (process.send !== undefined) {
  answerStatsRequests(async (gc) => ownStats(gc));
  answerLoopDelayReadings();
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  // Nothing to announce if main.ts never listens: the parent's own start-up timeout reports it.
  waitForPort(port, Date.now() + 20_000).then(
    () => announcePort(port),
    () => undefined,
  );
}
