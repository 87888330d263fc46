import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describeMachine } from '../processes/machine.js';
import { int, mb } from '../load-runs/report.js';
import type { LoopDelay } from '../processes/loop-delay.js';
import type { AdmissionProbe, LeaseCheck } from './soak-limits.js';
import type { Tally } from './soak-traffic.js';
import type { UpstreamTally } from './soak-upstream.js';
import { usageReconciles, type UsageReconciliation } from './soak-usage.js';

/**
 * The soak's verdict: one row per criterion of the issue (PASS/FAIL), the traffic as the
 * clients saw it, and the memory and event-loop timeline; printed, and appended as a dated
 * section under "## Soak runs" at the end of bench/RESULTS.md (which bench/run.ts keeps when it
 * rewrites the rest of the file).
 */

export const SOAK_HEADING = '## Soak runs';
const SOAK_HEADING_LINE = /^## Soak runs[ \t]*$/m;

export interface RssPoint {
  readonly label: string;
  readonly atSec: number;
  readonly rssBytes: number;
}

export interface TimelinePoint {
  readonly atSec: number;
  readonly answered: number;
  readonly rssBytes: number;
  /** The event-loop delay over the interval that ended here. */
  readonly loop: LoopDelay;
}

export interface OutageRecord {
  readonly killedAtSec: number;
  readonly downMs: number;
  /** Requests answered while Redis was down or the gateway reconnecting. */
  readonly requestsDuring: number;
}

export interface SoakResult {
  readonly date: string;
  readonly command: string;
  readonly settings: string;
  readonly loadAtStart: number;
  readonly tally: Tally;
  readonly rss: readonly [RssPoint, RssPoint, RssPoint];
  readonly maxRssGrowth: number;
  readonly loop: LoopDelay;
  readonly maxLoopDelayMs: number;
  readonly timeline: readonly TimelinePoint[];
  readonly outage: OutageRecord;
  readonly leasesAfterTraffic: LeaseCheck;
  readonly leasesAfterProbe: LeaseCheck;
  readonly concurrency: AdmissionProbe;
  readonly rpm: AdmissionProbe;
  readonly usage: UsageReconciliation;
  readonly upstream: UpstreamTally;
}

interface Criterion {
  readonly name: string;
  readonly measured: string;
  readonly bound: string;
  readonly pass: boolean;
}

const ms = (value: number): string => value.toFixed(1);
const clock = (seconds: number): string => `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')}`;
const verdict = (pass: boolean): string => (pass ? 'PASS' : '**FAIL**');

function probeText(probe: AdmissionProbe): string {
  const redis = probe.redisCount === undefined ? '' : `, Redis counted ${Number.isNaN(probe.redisCount) ? 'nothing' : probe.redisCount}`;
  return `${probe.admitted} of limit ${probe.limit} admitted, next ${probe.refusedNext ? '429' : 'not refused'}${redis}`;
}

const probeExact = (probe: AdmissionProbe): boolean =>
  probe.admitted === probe.limit && probe.refusedNext && (probe.redisCount === undefined || probe.redisCount === probe.limit);

function criteria(r: SoakResult): Criterion[] {
  const [start, middle, end] = r.rss;
  const growth = Math.max(middle.rssBytes, end.rssBytes) / start.rssBytes;
  const u = r.usage;
  const leases = r.leasesAfterTraffic.leases + r.leasesAfterProbe.leases;
  return [
    { name: '5xx made by the gateway', measured: int(r.tally.gateway5xxCount), bound: '0', pass: r.tally.gateway5xxCount === 0 },
    { name: 'answers as expected', measured: `${int(r.tally.problemCount)} unexpected of ${int(r.tally.sent)}`, bound: '0 unexpected', pass: r.tally.problemCount === 0 },
    {
      name: 'RSS start / middle / end',
      measured: `${mb(start.rssBytes)} / ${mb(middle.rssBytes)} / ${mb(end.rssBytes)} MB (${growth >= 1 ? '+' : ''}${((growth - 1) * 100).toFixed(1)}%)`,
      bound: `≤ +${Math.round((r.maxRssGrowth - 1) * 100)}%`,
      pass: growth <= r.maxRssGrowth,
    },
    {
      name: 'event-loop delay p99',
      measured: `${ms(r.loop.p99Ms)} ms (p50 ${ms(r.loop.p50Ms)}, max ${ms(r.loop.maxMs)})`,
      bound: `≤ ${r.maxLoopDelayMs} ms`,
      pass: r.loop.p99Ms <= r.maxLoopDelayMs,
    },
    {
      name: 'usage reconciles',
      measured:
        `${int(u.rows)} ledger rows for ${int(u.expectedRows)} requests (${u.missing} missing, ${u.unexpected + u.duplicates} extra, ` +
        `${u.statusMismatches + u.estimatedMismatches + u.tokenMismatches} differing); ${int(u.ledgerTokens)} tokens = upstream ${int(u.upstreamTokens)}; ` +
        `${int(u.estimatedRows)} estimated rows (${int(u.estimatedTokens)} tokens) for the streams clients left; /admin/usage ${int(u.aggregateTokens)}, ` +
        `tollgate_tokens_total ${int(u.metricsTokens)}; ${u.rowsDropped} rows dropped`,
      bound: 'exact',
      pass: usageReconciles(u),
    },
    {
      name: 'limits reconcile',
      measured: `${leases} leases left in Redis; concurrency: ${probeText(r.concurrency)}; rpm: ${probeText(r.rpm)}${r.rpm.note ? ` (${r.rpm.note})` : ''}`,
      bound: 'exact',
      pass: leases === 0 && probeExact(r.concurrency) && probeExact(r.rpm),
    },
    {
      name: 'client aborts reach the upstream',
      measured:
        `${int(r.upstream.heldClosed)} of ${int(r.upstream.heldStreams)} held streams closed upstream (clients left ${int(r.tally.leftMidStream)}); ` +
        `${int(r.upstream.delayedAbandoned)} delayed answers abandoned (clients left ${int(r.tally.leftBeforeAnswer)} before an answer)`,
      bound: 'all',
      pass:
        r.upstream.heldClosed === r.upstream.heldStreams &&
        r.upstream.heldStreams === r.tally.leftMidStream &&
        r.upstream.delayedAbandoned === r.tally.leftBeforeAnswer,
    },
    {
      name: 'Redis restart exercised',
      measured: `killed at ${clock(r.outage.killedAtSec)}, listening again after ${(r.outage.downMs / 1000).toFixed(1)} s; ${int(r.outage.requestsDuring)} requests answered meanwhile; ${int(u.storeErrors)} store errors counted`,
      bound: 'store errors > 0',
      pass: u.storeErrors > 0 && r.outage.requestsDuring > 0,
    },
  ];
}

function criteriaTable(list: readonly Criterion[]): string {
  return ['| criterion | measured | bound | result |', '|---|---|---|:-:|', ...list.map((c) => `| ${c.name} | ${c.measured} | ${c.bound} | ${verdict(c.pass)} |`)].join('\n');
}

function trafficTable(tally: Tally): string {
  const lines = ['| requests | sent | answers | unexpected |', '|---|--:|---|--:|'];
  // The mix by volume, then the checks' own requests.
  const probe = (name: string): number => (name.startsWith('probe:') ? 1 : 0);
  const rows = [...tally.kinds].sort(([a, x], [b, y]) => probe(a) - probe(b) || y.sent - x.sent);
  for (const [name, kind] of rows) {
    const answers = [...kind.statuses].sort(([a], [b]) => a.localeCompare(b)).map(([status, count]) => `${status}: ${int(count)}`).join(', ');
    lines.push(`| ${name} | ${int(kind.sent)} | ${answers} | ${kind.problems} |`);
  }
  return lines.join('\n');
}

/** At most ~12 rows, whatever the duration. */
function timelineTable(timeline: readonly TimelinePoint[]): string {
  const step = Math.max(1, Math.ceil(timeline.length / 12));
  const lines = ['| at | requests answered | gateway RSS MB | loop delay p99 ms | loop delay max ms |', '|--:|--:|--:|--:|--:|'];
  timeline.forEach((point, i) => {
    if (i % step !== step - 1 && i !== timeline.length - 1) return;
    // The worst interval since the previous printed row.
    const span = timeline.slice(Math.max(0, i - step + 1), i + 1);
    const p99 = Math.max(...span.map((p) => p.loop.p99Ms));
    const max = Math.max(...span.map((p) => p.loop.maxMs));
    lines.push(`| ${clock(point.atSec)} | ${int(point.answered)} | ${mb(point.rssBytes)} | ${ms(p99)} | ${ms(max)} |`);
  });
  return lines.join('\n');
}

/** The whole report as markdown: verdicts first, then the detail. */
export function soakReport(r: SoakResult): { markdown: string; passed: boolean } {
  const list = criteria(r);
  const passed = list.every((c) => c.pass);
  const details: string[] = [];
  if (r.tally.gateway5xx.length > 0) details.push('5xx made by the gateway (first ones):', ...r.tally.gateway5xx.map((e) => `- at ${clock(e.atMs / 1000)}: ${e.status} ${e.code} (${e.kind})`));
  if (r.tally.problemExamples.length > 0) details.push('Unexpected answers (first ones):', ...r.tally.problemExamples.map((line) => `- ${line}`));
  if (r.usage.examples.length > 0) details.push('Ledger differences (first ones):', ...r.usage.examples.map((line) => `- ${line}`));
  const markdown = [
    `### ${r.date} — ${passed ? 'PASS' : 'FAIL'}`,
    '',
    `- **Command:** \`${r.command}\``,
    `- **Settings:** ${r.settings}`,
    `- **Machine:** ${describeMachine(r.loadAtStart)}`,
    `- **Store errors:** \`onStoreError: open\` — during the Redis outage the gateway admits against per-instance limits and counts \`tollgate_store_errors_total\`; in \`closed\` mode it would answer 503 \`store_unavailable\`, its own 5xx.`,
    '',
    criteriaTable(list),
    '',
    trafficTable(r.tally),
    '',
    timelineTable(r.timeline),
    ...(details.length > 0 ? ['', ...details] : []),
  ].join('\n');
  return { markdown, passed };
}

/** What bench/run.ts carries over when it rewrites RESULTS.md: the soak runs, from their heading on ('' if none). */
export function soakSectionOf(document: string): string {
  const match = SOAK_HEADING_LINE.exec(document);
  return match ? `\n${document.slice(match.index).trimEnd()}\n` : '';
}

/** Appends one run under "## Soak runs" at the end of `path` (created with the heading if missing). */
export function appendSoakRun(path: string, runMarkdown: string): void {
  const document = existsSync(path) ? readFileSync(path, 'utf8').trimEnd() : '# Benchmark results';
  const head = SOAK_HEADING_LINE.test(document)
    ? document
    : `${document}\n\n${SOAK_HEADING}\n\nAppended by \`npm run soak\` (bench/soak/soak-mixed.ts), one section per run; \`npm run bench\` keeps this part when it rewrites the rest.`;
  writeFileSync(path, `${head}\n\n${runMarkdown}\n`);
}

