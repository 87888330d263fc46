import { availableParallelism, cpus } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { forceStreamUsage } from '../../src/metering/index.js';
import { createChatBodyChecker, estimateChatTokens, type ChatBodyCheck, type ChatBodyChecker } from '../../src/validation/index.js';
import { renderValidationBodyUnbounded, validateChatBodyUnbounded } from '../../test/fixtures/hostile-bodies/unbounded-validation.js';
import { hostileBodies, inlineEdgeBodies, ordinaryBodies, type BodyCase } from '../../test/fixtures/hostile-bodies/hostile-body-cases.js';

/**
 * `npx tsc -p tsconfig.bench.json && node dist/bench/hostile-bodies/hostile-bodies.js`: what each
 * hostile chat body costs the event loop, checked as the pipeline did before (validateChatBody,
 * renderValidationBody, estimateChatTokens and forceStreamUsage, inline, unbounded: baseline/)
 * and through the ChatBodyChecker. The loop's delay is sampled every millisecond while each body
 * is checked: its maximum is what a concurrent ordinary request would have waited. Each body is
 * checked HOSTILE_ROUNDS times (5), before and after in turn; the table gives the median round
 * and the worst (GC pauses land at random).
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Measured {
  /** Longest event-loop delay seen while the body was checked, ms. */
  readonly maxDelayMs: number;
  /** Until the answer was in hand, ms. */
  readonly answerMs: number;
  /** UTF-8 bytes of the 422, or undefined when the body passed. */
  readonly answerBytes: number | undefined;
  /** Main-thread heap grown by the check (garbage included), MB. */
  readonly heapMb: number;
}

/** Checks one body while the event loop's delay is sampled; `check` answers the 422 text or undefined. */
async function measure(check: () => string | undefined | Promise<string | undefined>): Promise<Measured> {
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  await sleep(25);
  const started = performance.now();
  const answer = await check();
  const answerMs = performance.now() - started;
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  await sleep(25);
  delay.disable();
  return { maxDelayMs: delay.max / 1e6, answerMs, answerBytes: answer === undefined ? undefined : Buffer.byteLength(answer), heapMb };
}

/** The pipeline's work on a chat body before the checker: all of it inline, the 422 unbounded. */
function checkAsBefore({ body, contentType }: BodyCase): string | undefined {
  const validation = validateChatBodyUnbounded(body, contentType);
  if (!validation.ok) return renderValidationBodyUnbounded(validation.detail);
  estimateChatTokens(validation.body, 16);
  forceStreamUsage(body, validation.body);
  return undefined;
}

const answerText = (result: ChatBodyCheck): string | undefined => (result.ok ? undefined : result.body);
const ROUNDS = Number(process.env['HOSTILE_ROUNDS'] ?? '5');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** Median and worst of one measure over the rounds. */
function spread(rounds: readonly Measured[], pick: (m: Measured) => number): string {
  const values = rounds.map(pick);
  return `${median(values).toFixed(1)} / ${Math.max(...values).toFixed(1)}`;
}

const size = (bytes: number): string => (bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MB` : `${(bytes / 1024).toFixed(1)} KB`);
const answer = (bytes: number | undefined): string => (bytes === undefined ? 'passes' : size(bytes));

function row(name: string, bytes: number, before: readonly Measured[], after: readonly Measured[], path: string): string {
  return [
    name,
    size(bytes),
    spread(before, (m) => m.maxDelayMs),
    spread(after, (m) => m.maxDelayMs),
    path,
    median(after.map((m) => m.answerMs)).toFixed(1),
    answer(before[0]!.answerBytes),
    answer(after[0]!.answerBytes),
    median(before.map((m) => m.heapMb)).toFixed(0),
    median(after.map((m) => m.heapMb)).toFixed(0),
  ].join(' | ');
}

/** Checks a body ROUNDS times each way, in turn; returns the rounds and where the checker took it. */
async function compare(checker: ChatBodyChecker, body: BodyCase): Promise<[Measured[], Measured[], string]> {
  const before: Measured[] = [];
  const after: Measured[] = [];
  let path = 'inline';
  for (let round = 0; round < ROUNDS; round++) {
    before.push(await measure(() => checkAsBefore(body)));
    after.push(
      await measure(() => {
        const result = checker.check(body.body, body.contentType);
        if (!(result instanceof Promise)) return answerText(result);
        path = 'worker';
        return result.then(answerText);
      }),
    );
  }
  return [before, after, path];
}

async function main(): Promise<void> {
  const checker = createChatBodyChecker({ defaultCompletionTokens: 16, forceStreamUsage: true });
  // Warm up: JIT on both paths, and the worker started (once per process in production too).
  for (const { body, contentType } of ordinaryBodies()) for (let i = 0; i < 20; i++) checkAsBefore({ name: '', body, contentType });
  await checker.check(Buffer.from(`{"model":"m","messages":[${'1,'.repeat(20_000)}1]}`), 'application/json');

  const lines = [
    `Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, ${new Date().toISOString().slice(0, 10)}; ${ROUNDS} rounds, median / worst`,
    '',
    '| body | size | max loop delay before, ms | after, ms | after: checked | after: answer in, ms | 422 before | 422 after | heap growth before, MB | after, MB |',
    '|---|--:|--:|--:|---|--:|--:|--:|--:|--:|',
  ];
  for (const body of [...ordinaryBodies(), ...inlineEdgeBodies(), ...hostileBodies()]) {
    const [before, after, path] = await compare(checker, body);
    lines.push(`| ${row(body.name, body.body.length, before, after, path)} |`);
  }
  await checker.close();
  console.log(lines.join('\n'));
}

await main();
