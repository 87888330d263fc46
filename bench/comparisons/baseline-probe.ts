import { answerStatsRequests, ownStats } from '../processes/process-stats.js';

/**
 * Preloaded (`node --import <this file>`) into another checkout's bench target (`--baseline`),
 * whose own code may not answer stats requests (older targets only announce their port): this
 * answers them as bench/load-runs/target.ts does, with process.cpuUsage() of that process, so its CPU
 * µs/req is measured the way every other row's is. A target that answers too sends a second,
 * equal reply, which the parent ignores (it listens for one reply per request id).
 */

if (process.send !== undefined) answerStatsRequests(async (gc) => ownStats(gc));
