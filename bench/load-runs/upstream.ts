import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { announceListening, exitWithParent } from '../processes/child-lifecycle.js';

/**
 * The fake upstream the benchmark drives (its own process, so its work never shares an event
 * loop with what is measured). Answers as fast as it can with UPSTREAM.md-shaped bodies:
 *   POST /v1/chat/completions  a chat.completion with usage, or SSE when `stream: true`
 *   GET  /v1/models            the inference host's model list
 *   POST /v1/preview/models, POST /v1/preview/training-jobs (and sft-)  a new id (`--events` setup)
 *   GET  /v1/preview/training-jobs/{id}[/events]  a running job, and a page of its events
 * Streams write the first event at once and the rest every STREAM_INTERVAL_MS, like a model
 * emitting tokens: a gateway that buffered the stream would show it in time to first chunk.
 */

const STREAM_INTERVAL_MS = Number(process.env.BENCH_STREAM_INTERVAL_MS ?? 1);
const STREAM_CONTENT_CHUNKS = 8;
const USAGE = { prompt_tokens: 57, completion_tokens: 24, total_tokens: 81 };

const MODELS_BODY = Buffer.from(
  JSON.stringify({
    object: 'list',
    data: [
      { id: 'Qwen/Qwen3-14B', object: 'model', created: 0, owned_by: 'system', root: 'Qwen/Qwen3-14B' },
      { id: 'meta-llama/Llama-3.1-8B-Instruct', object: 'model', created: 0, owned_by: 'system', root: 'meta-llama/Llama-3.1-8B-Instruct' },
    ],
  }),
);

/** Built once per model name (the benchmark uses one), so the hot path only writes bytes. */
const completionBodies = new Map<string, Buffer>();

function completionBody(model: string): Buffer {
  let body = completionBodies.get(model);
  if (!body) {
    body = Buffer.from(
      JSON.stringify({
        id: 'chatcmpl-9b1f0c2e',
        object: 'chat.completion',
        created: 1763700000,
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Loss and grad norm are steady and reward is rising: training looks stable.', tool_calls: [] },
            logprobs: null,
            finish_reason: 'stop',
            stop_reason: null,
          },
        ],
        usage: USAGE,
      }),
    );
    completionBodies.set(model, body);
  }
  return body;
}

/** The SSE events of one streamed completion; the usage chunk only when the client asked for it. */
function streamEvents(model: string, includeUsage: boolean): string[] {
  const base = { id: 'chatcmpl-9b1f0c2f', object: 'chat.completion.chunk', created: 1763700000, model };
  const usageField = includeUsage ? { usage: null } : {};
  const event = (choices: unknown[]): string => `data: ${JSON.stringify({ ...base, choices, ...usageField })}\n\n`;
  const events = [event([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }])];
  for (let i = 0; i < STREAM_CONTENT_CHUNKS; i++) {
    events.push(event([{ index: 0, delta: { content: ` token${i}` }, logprobs: null, finish_reason: null }]));
  }
  events.push(event([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop', stop_reason: null }]));
  if (includeUsage) events.push(`data: ${JSON.stringify({ ...base, choices: [], usage: USAGE })}\n\n`);
  events.push('data: [DONE]\n\n');
  return events;
}

/**
 * The events of every job (one history: the fake trains nothing): started, then gradient steps,
 * 48 in all. A page holds the events strictly after `after`, ascending, at most `limit` (1–100).
 */
const JOB_EVENTS = Array.from({ length: 48 }, (_, i) => {
  const id = `evt_${String(i + 1).padStart(4, '0')}`;
  if (i === 0) return { id, type: 'training_started', data: { num_sequences: 64 } };
  const metric = (start: number, slope: number): number => Number((start + i * slope).toFixed(3));
  return { id, type: 'gradient_step', data: { step: i, loss: metric(0.9, -0.01), grad_norm: metric(1.9, -0.004), reward: metric(0.2, 0.008) } };
});

/** Built once per query string (a poller repeats one): the hot path only writes bytes. Bounded, so odd queries cannot grow it. */
const eventPages = new Map<string, Buffer>();

function eventsPage(rawQuery: string): Buffer {
  const cached = eventPages.get(rawQuery);
  if (cached) return cached;
  const query = new URLSearchParams(rawQuery);
  const after = query.get('after');
  const limit = Math.min(100, Math.max(1, Number(query.get('limit') ?? 20) || 20));
  const start = after === null ? 0 : JOB_EVENTS.findIndex((event) => event.id === after) + 1;
  const data = JOB_EVENTS.slice(start, start + limit);
  const page = Buffer.from(
    JSON.stringify({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < JOB_EVENTS.length }),
  );
  if (eventPages.size < 100) eventPages.set(rawQuery, page);
  return page;
}

function readJson(req: IncomingMessage, answer: (body: Record<string, unknown> | undefined) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      answer(typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined);
    } catch {
      answer(undefined);
    }
  });
}

const BAD_JSON = Buffer.from('{"detail":"bad json"}');
const TRAINING_JOB_PATH = /^\/v1\/preview\/training-jobs\/([^/]+)(\/events)?\/?$/;

/** The training service's preview routes the `--events` comparison uses; false when `path` is none of them. */
function handlePreview(req: IncomingMessage, res: ServerResponse, path: string, query: string): boolean {
  if (req.method === 'POST' && path === '/v1/preview/models') {
    readJson(req, (body) => {
      if (!body) return sendJson(res, 400, BAD_JSON);
      const model = { id: randomUUID(), entity: body.entity ?? 'acme', project: body.project, name: body.name, base_model: body.base_model, run_id: null };
      sendJson(res, 200, Buffer.from(JSON.stringify(model)));
    });
    return true;
  }
  if (req.method === 'POST' && (path === '/v1/preview/training-jobs' || path === '/v1/preview/sft-training-jobs')) {
    readJson(req, (body) => (typeof body?.model_id === 'string' ? sendJson(res, 200, Buffer.from(JSON.stringify({ id: randomUUID() }))) : sendJson(res, 400, BAD_JSON)));
    return true;
  }
  const job = req.method === 'GET' ? TRAINING_JOB_PATH.exec(path) : null;
  if (!job) return false;
  req.resume();
  if (job[2]) sendJson(res, 200, eventsPage(query));
  else sendJson(res, 200, Buffer.from(JSON.stringify({ id: job[1], status: 'running' })));
  return true;
}

function sendJson(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
}

function stream(res: ServerResponse, events: string[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  let next = 0;
  const writeNext = (): void => {
    res.write(events[next++]);
    if (next === events.length) res.end();
    else setTimeout(writeNext, STREAM_INTERVAL_MS);
  };
  res.once('close', () => {
    next = events.length;
  });
  writeNext();
}

function handleChat(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
  let body: { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown } };
  try {
    body = JSON.parse(raw.toString('utf8')) as typeof body;
  } catch {
    sendJson(res, 400, Buffer.from('{"detail":"bad json"}'));
    return;
  }
  const model = typeof body.model === 'string' ? body.model : 'unknown';
  if (body.stream === true) stream(res, streamEvents(model, body.stream_options?.include_usage === true));
  else sendJson(res, 200, completionBody(model));
  void req;
}

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const [path = '/', query = ''] = (req.url ?? '/').split('?', 2);
  if (req.method === 'GET' && path === '/v1/models') {
    req.resume();
    sendJson(res, 200, MODELS_BODY);
    return;
  }
  if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/v1/chat/completions/')) {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handleChat(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    return;
  }
  if (handlePreview(req, res, path, query)) return;
  req.resume();
  sendJson(res, 404, Buffer.from('{"detail":"Not Found"}'));
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;

exitWithParent(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
server.listen(0, '127.0.0.1', () => announceListening(server));
