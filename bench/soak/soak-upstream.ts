import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { CHECKPOINT_LIST, EVENT_LIST, streamEvents } from '../../test/fixtures/training-service.js';
import { announceListening, exitWithParent } from '../processes/child-lifecycle.js';
import { answer } from '../processes/ipc.js';

/**
 * The fake training service and inference host of `npm run soak` (its own process): every
 * route the gateway forwards, with UPSTREAM.md-shaped bodies, and a count of the usage it
 * reported per request id — what the gateway's ledger must add up to.
 *
 *   POST /v1/chat/completions   usage: prompt = ceil(body bytes / 4), completion = 8 + (n mod 57)
 *                               for x-request-id `soak-<n>`; SSE when `stream: true` (usage chunk
 *                               only when asked for: the gateway's forceStreamUsage asks)
 *   GET  /v1/models, /v1/health, /v1/system-check
 *   /v1/preview/models[...], /v1/preview/training-jobs[...], /v1/preview/sft-training-jobs
 *
 * Request headers the gateway forwards untouched steer it:
 *   x-soak-hold: 1        a stream sends its first events, then waits for the client to leave
 *                         (it never reports usage: the gateway must charge an estimate)
 *   x-soak-delay-ms: N    answers after N ms (the client leaves before: nothing is charged)
 * Every response carries `x-soak-upstream: 1`, so the client can tell the upstream's answers
 * from the gateway's own.
 */

const STREAM_INTERVAL_MS = 2;
const STREAM_CONTENT_CHUNKS = 8;
/** Content events a held stream sends before it waits. */
const HELD_CONTENT_CHUNKS = 3;
const MARK = { 'x-soak-upstream': '1' } as const;

export interface UpstreamTally {
  /** [request id, total tokens] of every chat reply that carried usage and was sent in full. */
  readonly usage: Array<[string, number]>;
  /** Streams held open until the client left, and how many of those were closed. */
  readonly heldStreams: number;
  readonly heldClosed: number;
  /** Delayed answers whose client left before they were sent. */
  readonly delayedAbandoned: number;
}

const usageById = new Map<string, number>();
let heldStreams = 0;
let heldClosed = 0;
let delayedAbandoned = 0;

interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

function usageFor(requestId: string, bodyBytes: number): Usage {
  const n = Number(/^soak-(\d+)$/.exec(requestId)?.[1] ?? 0);
  const prompt = Math.ceil(bodyBytes / 4);
  const completion = 8 + (n % 57);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...MARK });
  res.end(text);
}

/** Counts a reply's usage once the whole reply has been handed to the connection. */
function countOnFinish(res: ServerResponse, requestId: string, usage: Usage): void {
  res.once('finish', () => usageById.set(requestId, usage.total_tokens));
}

/** Writes events one per interval; a held stream stops after its first ones and waits. */
function stream(res: ServerResponse, events: string[], hold: boolean): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...MARK });
  const last = hold ? 1 + HELD_CONTENT_CHUNKS : events.length;
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  const writeNext = (): void => {
    res.write(events[next++]);
    if (next < last) timer = setTimeout(writeNext, STREAM_INTERVAL_MS);
    else if (!hold) res.end();
  };
  res.once('close', () => {
    clearTimeout(timer);
    if (hold) heldClosed++;
  });
  if (hold) heldStreams++;
  writeNext();
}

function answerChat(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
  const requestId = String(req.headers['x-request-id'] ?? '');
  let body: { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };
  try {
    body = JSON.parse(raw.toString('utf8')) as typeof body;
  } catch {
    sendJson(res, 400, { detail: 'the gateway forwarded a body that is not JSON' });
    return;
  }
  const model = typeof body.model === 'string' ? body.model : 'unknown';
  const usage = usageFor(requestId, raw.length);
  if (body.stream !== true) {
    countOnFinish(res, requestId, usage);
    sendJson(res, 200, {
      id: 'chatcmpl-50a0',
      object: 'chat.completion',
      created: 1763700000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Reward is rising and the loss is flat.', tool_calls: [] }, logprobs: null, finish_reason: 'stop', stop_reason: null }],
      usage,
    });
    return;
  }
  const hold = req.headers['x-soak-hold'] === '1';
  const reported = !hold && body.stream_options?.include_usage === true ? usage : null;
  if (reported) countOnFinish(res, requestId, reported);
  stream(res, streamEvents(model, STREAM_CONTENT_CHUNKS, reported), hold);
}

const MODELS = {
  object: 'list',
  data: [
    { id: 'Qwen/Qwen3-14B', object: 'model', created: 0, owned_by: 'system', root: 'Qwen/Qwen3-14B' },
    { id: 'meta-llama/Llama-3.1-8B-Instruct', object: 'model', created: 0, owned_by: 'system', root: 'meta-llama/Llama-3.1-8B-Instruct' },
  ],
};

function parseObject(raw: Buffer): Record<string, unknown> {
  try {
    const value = JSON.parse(raw.toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Every route but chat: the answers of the training service and the inference host. */
function answerOther(method: string, path: string, raw: Buffer, res: ServerResponse): void {
  const key = `${method} ${path}`;
  if (key === 'GET /v1/models') return sendJson(res, 200, MODELS);
  if (key === 'GET /v1/health') return sendJson(res, 200, {});
  if (key === 'GET /v1/system-check') {
    const ok = { success: true, duration: 0.002, error: null };
    return sendJson(res, 200, { api: ok, database: ok, cpu_queue: ok, gpu_queue: ok });
  }
  if (key === 'POST /v1/preview/models') {
    const body = parseObject(raw);
    return sendJson(res, 200, { id: randomUUID(), entity: body.entity ?? 'acme', project: body.project, name: body.name, base_model: body.base_model, run_id: null });
  }
  if (key === 'POST /v1/preview/training-jobs' || key === 'POST /v1/preview/sft-training-jobs') return sendJson(res, 200, { id: randomUUID() });
  let match = /^\/v1\/preview\/models\/([^/]+)$/.exec(path);
  if (match && method === 'DELETE') return sendJson(res, 200, { model_id: match[1], deleted_checkpoints: 2, deleted_run: true });
  match = /^\/v1\/preview\/models\/([^/]+)\/checkpoints$/.exec(path);
  if (match && method === 'GET') return sendJson(res, 200, CHECKPOINT_LIST);
  if (match && method === 'DELETE') return sendJson(res, 200, { deleted_count: 1, not_found_steps: [] });
  match = /^\/v1\/preview\/models\/([^/]+)\/log$/.exec(path);
  if (match && method === 'POST') return sendJson(res, 200, {});
  match = /^\/v1\/preview\/training-jobs\/([^/]+)\/events$/.exec(path);
  if (match && method === 'GET') return sendJson(res, 200, EVENT_LIST);
  match = /^\/v1\/preview\/training-jobs\/([^/]+)$/.exec(path);
  if (match && method === 'GET') return sendJson(res, 200, { id: match[1], status: 'running' });
  sendJson(res, 404, { detail: 'Not Found' });
}

function route(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
  const path = (req.url ?? '/').split('?', 1)[0]!;
  const method = req.method ?? 'GET';
  if (method === 'POST' && (path === '/v1/chat/completions' || path === '/v1/chat/completions/')) answerChat(req, res, raw);
  else answerOther(method, path, raw, res);
}

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    const delayMs = Number(req.headers['x-soak-delay-ms'] ?? 0);
    if (!(delayMs > 0)) {
      route(req, res, raw);
      return;
    }
    const timer = setTimeout(() => route(req, res, raw), delayMs);
    res.once('close', () => {
      if (res.headersSent) return;
      clearTimeout(timer);
      delayedAbandoned++;
    });
  });
});
server.headersTimeout = 65_000;

answer<null, UpstreamTally>('soak-upstream-tally', () => ({ usage: [...usageById], heldStreams, heldClosed, delayedAbandoned }));
exitWithParent(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
server.listen(0, '127.0.0.1', () => announceListening(server));
