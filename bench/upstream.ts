import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { announceListening, exitWithParent } from './child-lifecycle.js';

/**
 * The fake upstream the benchmark drives (its own process, so its work never shares an event
 * loop with what is measured). Answers as fast as it can with UPSTREAM.md-shaped bodies:
 *   POST /v1/chat/completions  a chat.completion with usage, or SSE when `stream: true`
 *   GET  /v1/models            the inference host's model list
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
  const path = req.url?.split('?')[0];
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
