import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { checkChatBodyNow, checkValidChatBodyNow, type ChatBodyCheck } from './check-now.js';
import type { ChatFactSettings } from './chat-facts.js';
import { isCheapToParse, type ParseCostLimits } from './parse-cost.js';
import { fromPortable, type ChatWorkerReply, type ChatWorkerTask } from './chat-worker-messages.js';
import { WorkerPool, WorkerPoolError } from './worker-pool.js';

export interface ChatBodyChecker {
  /** Synchronous for ordinary bodies; a Promise only when the body went to a worker. */
  check(raw: Buffer, contentType: string | undefined): ChatBodyCheck | Promise<ChatBodyCheck>;
  /** Bodies larger than this always go to a worker: read them into shared memory, which a worker reads without a copy. */
  readonly inlineMaxBytes: number;
  /** Stops the workers; checks still in a worker are rejected. */
  close(): Promise<void>;
}

export interface ChatBodyCheckerOptions extends ChatFactSettings {
  /** Bodies larger than this always go to a worker (default 128 KiB). */
  readonly inlineMaxBytes?: number;
  /** Worker threads, started on first need (default: the cores less one, at least one). */
  readonly workers?: number;
  /** Heap limit of each worker in MB (default 512): a body that exhausts it fails alone, with a 500. */
  readonly workerHeapMb?: number;
}

/*
 * Where a body is checked. Up to smallBodyBytes, always on the event loop: even the worst
 * shapes take a few milliseconds there, and this is every ordinary chat request. Up to
 * inlineMaxBytes, a scan of the structure (strings skipped natively) keeps only bodies that
 * JSON.parse reads quickly, and only their happy path: a failure is worked out in a worker,
 * where Python's decoder (up to 250 ns a byte) and the 422 cannot hold up other requests.
 * The worst shapes within these bounds take under 10 ms warm (src/validation/README.md).
 */
export const INLINE_BOUNDS = {
  smallBodyBytes: 8 * 1024,
  inlineMaxBytes: 128 * 1024,
  parse: { maxStructures: 8192, maxDepth: 64 } satisfies ParseCostLimits,
} as const;
const DEFAULT_WORKER_HEAP_MB = 512;

function wholeNumber(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new RangeError(`${name} must be an integer of at least ${min}, got ${value}`);
  return value;
}

/** The worker file beside this module: the compiled .js, or the .ts sources through tsx. */
function chatWorkerUrl(): URL {
  const fromSource = import.meta.url.endsWith('.ts');
  return new URL(fromSource ? './chat-worker-from-source.mjs' : './chat-worker.js', import.meta.url);
}

/**
 * Builds the chat body check the pipeline runs on every chat request (SPEC 5 validation,
 * token estimate of SPEC 6.3, forceStreamUsage of SPEC 6.4), keeping the event loop free of
 * costly bodies by checking those in a pool of worker threads.
 */
export function createChatBodyChecker(options: ChatBodyCheckerOptions): ChatBodyChecker {
  const settings: ChatFactSettings = { defaultCompletionTokens: options.defaultCompletionTokens, forceStreamUsage: options.forceStreamUsage };
  const inlineMaxBytes = wholeNumber('inlineMaxBytes', options.inlineMaxBytes ?? INLINE_BOUNDS.inlineMaxBytes, 0);
  const smallBodyBytes = Math.min(INLINE_BOUNDS.smallBodyBytes, inlineMaxBytes);
  const workers = wholeNumber('workers', options.workers ?? Math.max(1, availableParallelism() - 1), 1);
  const heapMb = wholeNumber('workerHeapMb', options.workerHeapMb ?? DEFAULT_WORKER_HEAP_MB, 16);
  const url = chatWorkerUrl();
  const spawn = (): Worker =>
    new Worker(url, { workerData: settings, execArgv: [], resourceLimits: { maxOldGenerationSizeMb: heapMb } });
  const pool = new WorkerPool<ChatWorkerTask, ChatWorkerReply>(spawn, workers);

  const checkInWorker = async (raw: Buffer, contentType: string | undefined): Promise<ChatBodyCheck> => {
    const reply = await pool.run(() => {
      // Shared memory (readBody's, for large bodies) is read in place: the worker only reads it.
      if (raw.buffer instanceof SharedArrayBuffer) return { message: { bytes: raw, contentType }, transfer: [] };
      // Else one copy, made when a worker takes the job, transferred to it; `raw` stays the caller's.
      // allocUnsafeSlow: an ArrayBuffer of its own (transferable), not zero-filled before the copy.
      const bytes = Buffer.allocUnsafeSlow(raw.length);
      raw.copy(bytes);
      return { message: { bytes, contentType }, transfer: [bytes.buffer] };
    });
    if ('failure' in reply) throw new WorkerPoolError(`the chat body check failed in a worker: ${reply.failure}`);
    return fromPortable(reply.check, raw);
  };

  return {
    check(raw, contentType) {
      if (raw.length <= smallBodyBytes) return checkChatBodyNow(raw, contentType, settings);
      if (raw.length > inlineMaxBytes || !isCheapToParse(raw, INLINE_BOUNDS.parse)) return checkInWorker(raw, contentType);
      return checkValidChatBodyNow(raw, contentType, settings) ?? checkInWorker(raw, contentType);
    },
    inlineMaxBytes,
    close: () => pool.close(),
  };
}
