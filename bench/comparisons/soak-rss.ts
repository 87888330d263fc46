import { runLoad } from '../load-runs/load.js';
import { log } from '../processes/log.js';
import { queryStats, type ProcessStats } from '../processes/process-stats.js';
import { mb, ratio } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { startGatewayTarget, type Stack, type Store } from '../load-runs/stack.js';

/**
 * `--soak-rss`: does a gateway's memory settle or keep growing? Fresh gateway processes (so the
 * request counts are exact) are driven to 20,000 and then to 200,000 requests; RSS is read after
 * a full garbage collection (--expose-gc) at each point. No leak: RSS at 200,000 within 20% of
 * RSS at 20,000 (the first 20,000 cover JIT, pools and caches reaching their working size).
 */

const CHECKPOINTS = [20_000, 200_000] as const;
const MAX_GROWTH = 1.2;

interface SoakResult {
  readonly name: string;
  readonly atStart: ProcessStats;
  readonly atCheckpoints: ProcessStats[];
  readonly failures: number;
}

async function soakOne(stack: Stack, store: Store, settings: Settings): Promise<SoakResult> {
  const target = await startGatewayTarget(stack, store, { name: `gateway-${store} (fresh)`, exposeGc: true });
  const channel = target.process!.child;
  const atStart = await queryStats(channel, true);
  const atCheckpoints: ProcessStats[] = [];
  let served = 0;
  let failures = 0;
  for (const checkpoint of CHECKPOINTS) {
    log(`soak ${target.name}: ${served.toLocaleString('en-US')} → ${checkpoint.toLocaleString('en-US')} requests`);
    const sample = await runLoad(target.url, { connections: settings.connections, durationSec: settings.duration, amount: checkpoint - served });
    served = checkpoint;
    failures += sample.failures;
    atCheckpoints.push(await queryStats(channel, true));
  }
  await target.process!.stop();
  return { name: target.name, atStart, atCheckpoints, failures };
}


export async function measureSoakRss(stack: Stack, settings: Settings): Promise<string> {
  const results = [await soakOne(stack, 'memory', settings), await soakOne(stack, 'redis', settings)];
  const [first, last] = CHECKPOINTS.map((n) => n.toLocaleString('en-US'));
  const lines = [
    `| target | RSS at start MB | RSS after ${first} MB | RSS after ${last} MB | RSS ${last} vs ${first} | heap after GC ${first} / ${last} MB | no leak (≤ ${ratio(MAX_GROWTH)}) | failed |`,
    '|---|--:|--:|--:|--:|--:|:-:|--:|',
  ];
  for (const result of results) {
    const [early, late] = result.atCheckpoints as [ProcessStats, ProcessStats];
    const growth = late.rssBytes / early.rssBytes;
    lines.push(
      `| ${result.name} | ${mb(result.atStart.rssBytes)} | ${mb(early.rssBytes)} | ${mb(late.rssBytes)} | ${ratio(growth)} | ` +
        `${mb(early.heapUsedBytes)} / ${mb(late.heapUsedBytes)} | ${growth <= MAX_GROWTH ? '✓' : '✗'} | ${result.failures} |`,
    );
  }
  return lines.join('\n');
}
