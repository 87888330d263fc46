import { baselineCaption, STORE_PAIRINGS } from './baseline-compare.js';
import type { BaselineTargets } from './baseline-target.js';
import { log } from '../processes/log.js';
import { measureRounds, warmUp, type Target } from '../load-runs/measure.js';
import { pairTable, versusProxyTable } from '../load-runs/report.js';
import type { Settings } from '../load-runs/settings.js';
import { eventsPath, headersWithoutBody, POLLED_MODEL_BODY, REQUEST_HEADERS, trainingJobBody } from '../load-runs/workload.js';

/**
 * `--events`: clients polling a training job's events (GET /v1/preview/training-jobs/{id}/events
 * ?after=…), the preview route a training client calls every second for the whole of a job.
 * Each target polls a job the bench team created through that very target (a model, then a job
 * on it), so a gateway with ownership on finds the job in its registry's memory, as in
 * production; a gateway without ownership (baseline-*) just forwards. Every connection is a
 * client polling back to back (the next poll as soon as the last answer is in), so the load
 * stands for many more clients polling once a second.
 */

async function createdId(target: Target, path: string, body: string): Promise<string> {
  const headers = target.request?.headers ?? REQUEST_HEADERS;
  const response = await fetch(target.url + path, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
  const answer = await response.text();
  const id: unknown = response.ok ? (JSON.parse(answer) as { id?: unknown }).id : undefined;
  if (typeof id !== 'string') throw new Error(`${target.name}: POST ${path} answered ${response.status}: ${answer.slice(0, 300)}`);
  return id;
}

/** `target` polling a job of its own: model and job created through it first. */
async function pollingTarget(target: Target): Promise<Target> {
  const modelId = await createdId(target, '/v1/preview/models', POLLED_MODEL_BODY);
  const jobId = await createdId(target, '/v1/preview/training-jobs', trainingJobBody(modelId));
  return { ...target, request: { method: 'GET', path: eventsPath(jobId), headers: headersWithoutBody(target.request?.headers ?? REQUEST_HEADERS) } };
}

/** One poll, which must be answered with a page of events: the size of that page, in bytes. */
async function pollOnce(target: Target): Promise<number> {
  const sent = target.request;
  if (!sent) throw new Error(`${target.name}: no events request`);
  const response = await fetch(target.url + sent.path, { headers: sent.headers });
  const answer = await response.text();
  if (!response.ok || !answer.includes('"object":"list"')) throw new Error(`${target.name}: GET ${sent.path} answered ${response.status}: ${answer.slice(0, 300)}`);
  return Buffer.byteLength(answer);
}

/** `mainTargets`: the main run's proxy, gateway-memory and gateway-redis; `baseline` when `--baseline` is given. */
export async function measureEventsPolling(mainTargets: readonly Target[], baseline: BaselineTargets | undefined, settings: Settings): Promise<string> {
  const targets: Target[] = [];
  for (const target of [...mainTargets, ...(baseline?.targets ?? [])]) targets.push(await pollingTarget(target));
  const pageBytes = await Promise.all(targets.map(pollOnce));
  log(`events polling: ${targets.map((target) => target.name).join(', ')}, ${settings.rounds} rounds`);
  await warmUp(targets, { connections: settings.connections, durationSec: settings.warmup });
  const rows = await measureRounds(targets, settings);
  const parts = [
    `\`GET ${decodeURIComponent(eventsPath('{id}'))}\` from ${settings.connections} clients polling back to back; each target polls a job created through it ` +
      `(gateway-* check that job's owner on every poll: the bench team, found in memory). The fake upstream answers two events (${pageBytes[0]} bytes).`,
    versusProxyTable(rows),
  ];
  if (baseline) {
    const unchecked = baseline.checkout.missingFeatures.includes('ownership checks') ? ' Without ownership, its polls are authenticated, limited and forwarded, never checked.' : '';
    parts.push(
      baselineCaption(baseline) + unchecked,
      'Gateway vs baseline, per store (each ratio taken within a round, then the median over rounds):',
      pairTable(rows, STORE_PAIRINGS, { label: 'store', row: 'gateway', base: 'baseline' }),
    );
  }
  return parts.join('\n\n');
}
