import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { CHAT_MODEL, CONCURRENCY_KEY, MAIN_KEY, RPM_KEY, type SoakKey } from './soak-gateway.js';

/**
 * The soak's clients: a steady stream of requests of many kinds, in a fixed interleaved mix,
 * each checked against what it should get, and a tally of what was seen — the input of the
 * summary and of reconciling the gateway's ledger (every request carries its own x-request-id).
 */

/** How the client reads the answer. */
export type ReadMode =
  /** The whole body; a 200 SSE stream must end with [DONE]. */
  | { readonly mode: 'full' }
  /** A 200 stream is left `holdMs` after its first content events (any other answer is read whole). */
  | { readonly mode: 'leave-mid-stream'; readonly holdMs: number }
  /** The client leaves after `afterMs`, before any answer (the upstream is told to answer later). */
  | { readonly mode: 'leave-before-answer'; readonly afterMs: number };

export interface RequestPlan {
  readonly kind: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The statuses this request may get; anything else is a failure of the soak. */
  readonly expect: readonly number[];
  /** Whether the gateway writes a ledger row for it (a limited route, a caller it could attribute). */
  readonly ledgerRow: boolean;
  readonly read: ReadMode;
  /** Called with a 2xx answer's body (preview flows take the ids they were given). */
  readonly onAnswer?: (body: string) => void;
}

export interface Outcome {
  readonly id: string;
  /** undefined: the client left before any answer. */
  readonly status: number | undefined;
  /** A 200 stream the client left before its end. */
  readonly leftMidStream: boolean;
  /** What was wrong with it, if anything. */
  readonly problem?: string;
  /** A status ≥ 500 the gateway made (not relayed from the upstream), with its error code. */
  readonly gateway5xx?: string;
}

/** What the gateway's ledger should hold for a request. */
export interface ExpectedRow {
  readonly kind: string;
  /** The status the client got; 499 when it left before any. */
  readonly status: number;
  /** A stream left mid-way: no usage was reported, the gateway charges an estimate. */
  readonly estimated: boolean;
}

export interface KindTally {
  sent: number;
  statuses: Map<string, number>;
  problems: number;
}

export interface Gateway5xx {
  readonly atMs: number;
  readonly kind: string;
  readonly status: number;
  readonly code: string;
}

const REQUEST_TIMEOUT_MS = 30_000;
const KEPT_EXAMPLES = 20;

/** Everything the clients saw, by request kind, and what the ledger should hold. */
export class Tally {
  readonly kinds = new Map<string, KindTally>();
  readonly expectedRows = new Map<string, ExpectedRow>();
  readonly gateway5xx: Gateway5xx[] = [];
  gateway5xxCount = 0;
  readonly problemExamples: string[] = [];
  problemCount = 0;
  readonly startedAt = performance.now();
  /** Set while the store is down or the gateway reconnecting: answers then are counted apart. */
  duringOutage = false;
  answeredDuringOutage = 0;
  /** 200 streams the client left mid-way, and requests it left before any answer. */
  leftMidStream = 0;
  leftBeforeAnswer = 0;

  record(plan: RequestPlan, outcome: Outcome): void {
    let kind = this.kinds.get(plan.kind);
    if (!kind) this.kinds.set(plan.kind, (kind = { sent: 0, statuses: new Map(), problems: 0 }));
    kind.sent++;
    if (this.duringOutage) this.answeredDuringOutage++;
    if (outcome.leftMidStream) this.leftMidStream++;
    else if (outcome.status === undefined && outcome.problem === undefined) this.leftBeforeAnswer++;
    const label = outcome.status === undefined ? 'left' : outcome.leftMidStream ? `${outcome.status} left` : String(outcome.status);
    kind.statuses.set(label, (kind.statuses.get(label) ?? 0) + 1);
    if (outcome.problem !== undefined) {
      kind.problems++;
      this.problemCount++;
      if (this.problemExamples.length < KEPT_EXAMPLES) this.problemExamples.push(`${plan.kind} ${plan.method} ${plan.path} (${outcome.id}): ${outcome.problem}`);
    }
    if (outcome.gateway5xx !== undefined) {
      this.gateway5xxCount++;
      const entry = { atMs: performance.now() - this.startedAt, kind: plan.kind, status: outcome.status ?? 0, code: outcome.gateway5xx };
      if (this.gateway5xx.length < KEPT_EXAMPLES) this.gateway5xx.push(entry);
    }
    if (plan.ledgerRow) this.expectedRows.set(outcome.id, { kind: plan.kind, status: outcome.status ?? 499, estimated: outcome.leftMidStream });
  }

  get sent(): number {
    let sent = 0;
    for (const kind of this.kinds.values()) sent += kind.sent;
    return sent;
  }
}

const isSse = (headers: IncomingHttpHeaders): boolean => (headers['content-type'] ?? '').startsWith('text/event-stream');

function errorCode(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'string' ? parsed.error.code : 'no OpenAI error code';
  } catch {
    return 'body not JSON';
  }
}

/** What is wrong with a complete answer, if anything. */
function checkAnswer(plan: RequestPlan, status: number, headers: IncomingHttpHeaders, body: string): string | undefined {
  if (!plan.expect.includes(status)) return `status ${status} (expected ${plan.expect.join(' or ')}): ${body.slice(0, 200)}`;
  if (status === 200 && isSse(headers)) {
    if (!body.endsWith('data: [DONE]\n\n')) return 'the stream ended without data: [DONE]';
    // The gateway asked the upstream for usage on the client's behalf: the usage chunk must not show.
    if (body.includes('"usage":{')) return 'the client saw a usage chunk it did not ask for';
  }
  return undefined;
}

/**
 * Sends one request through `agent` and reads it as its plan says. Never rejects: what went
 * wrong is the outcome's `problem`.
 */
function send(baseUrl: string, agent: Agent, id: string, plan: RequestPlan): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    let leftMidStream = false;
    const finish = (outcome: Omit<Outcome, 'id' | 'leftMidStream'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(leaveTimer);
      resolve({ id, leftMidStream, ...outcome });
    };
    const headers: Record<string, string | number> = { ...plan.headers, 'x-request-id': id };
    if (plan.body !== undefined) headers['content-length'] = Buffer.byteLength(plan.body);
    const req = request(baseUrl + plan.path, { method: plan.method, agent, headers }, (res) => {
      const status = res.statusCode ?? 0;
      const gateway5xx = status >= 500 && res.headers['x-soak-upstream'] !== '1';
      if (plan.read.mode === 'leave-before-answer') {
        res.resume();
        finish({ status, problem: `answered ${status} before the client left (the upstream was told to wait)` });
        req.destroy();
        return;
      }
      const holdMs = plan.read.mode === 'leave-mid-stream' && status === 200 ? plan.read.holdMs : undefined;
      res.setEncoding('utf8');
      let body = '';
      let events = 0;
      res.on('data', (chunk: string) => {
        body += chunk;
        if (holdMs === undefined || leftMidStream) return;
        events += chunk.split('data: ').length - 1;
        // The role event and two content events: the upstream has produced tokens.
        if (events < 3) return;
        leftMidStream = true;
        setTimeout(() => {
          finish({ status });
          req.destroy();
        }, holdMs);
      });
      res.on('end', () => {
        if (leftMidStream) {
          finish({ status, problem: 'a held stream ended before the client left' });
          return;
        }
        const problem = checkAnswer(plan, status, res.headers, body);
        if (problem === undefined && status >= 200 && status < 300) plan.onAnswer?.(body);
        finish({ status, ...(problem === undefined ? {} : { problem }), ...(gateway5xx ? { gateway5xx: errorCode(body) } : {}) });
      });
      res.on('error', (err) => {
        if (!leftMidStream) finish({ status, problem: `response broken: ${err.message}` });
      });
    });
    const leaveTimer =
      plan.read.mode === 'leave-before-answer'
        ? setTimeout(() => {
            finish({ status: undefined });
            req.destroy();
          }, plan.read.afterMs)
        : undefined;
    const timeout = setTimeout(() => {
      finish({ status: undefined, problem: `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` });
      req.destroy();
    }, REQUEST_TIMEOUT_MS);
    req.on('error', (err) => finish({ status: undefined, problem: `request failed: ${err.message}` }));
    req.end(plan.body);
  });
}

// ---- The mix -------------------------------------------------------------------------------

const auth = (key: SoakKey): string => `Bearer ${key.secret}`;
const JSON_TYPE = 'application/json';
const headersFor = (key: SoakKey, project: string | undefined, extra: Record<string, string> = {}): Record<string, string> => ({
  authorization: auth(key),
  ...(project === undefined ? {} : { 'openai-project': `${key.team}/${project}` }),
  'content-type': JSON_TYPE,
  ...extra,
});

const MESSAGES = [
  { role: 'system', content: 'You review RL training runs for the platform team.' },
  { role: 'user', content: 'Step 42: loss 0.412, grad_norm 1.73, reward 0.61. Is the run stable?' },
];
const chatBody = (extra: Record<string, unknown> = {}): string => JSON.stringify({ model: CHAT_MODEL, messages: MESSAGES, max_tokens: 96, ...extra });
const STREAM_BODY = chatBody({ stream: true });
const JSON_BODY = chatBody();
const INVALID_BODIES: readonly string[] = [
  JSON.stringify({ messages: MESSAGES }),
  JSON.stringify({ model: CHAT_MODEL, messages: 'hello' }),
  '{"model": "Qwen/Qwen3-14B", "messages": [',
  JSON.stringify({ model: 7, messages: [1, { role: 'user', content: 'hi' }] }),
];

/** One training workflow through the preview routes, a step at a time, with the ids the upstream gave. */
interface PreviewFlow {
  readonly n: number;
  step: number;
  modelId?: string;
  jobId?: string;
}

const idOf = (body: string): string | undefined => {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Preview flows: create a model, list and log to it, start a training job on it (RL or SFT),
 * poll the job and its events, delete checkpoints and the model. Every step is a request of the
 * mix; a flow moves on when its previous step was answered, so several run interleaved.
 */
class PreviewFlows {
  private readonly ready: PreviewFlow[] = [];
  private started = 0;

  next(): RequestPlan {
    const flow = this.ready.shift() ?? { n: this.started++, step: 0 };
    const plan = this.planFor(flow);
    return {
      ...plan,
      kind: 'preview',
      expect: [200],
      ledgerRow: true,
      read: { mode: 'full' },
      onAnswer: (body) => {
        if (flow.step === 0) flow.modelId = idOf(body);
        if (flow.step === 3) flow.jobId = idOf(body);
        flow.step++;
        if (flow.step < 8) this.ready.push(flow);
      },
    };
  }

  private planFor(flow: PreviewFlow): Pick<RequestPlan, 'method' | 'path' | 'headers' | 'body'> {
    const headers = headersFor(MAIN_KEY, 'train');
    const model = `/v1/preview/models/${flow.modelId ?? 'none'}`;
    const job = `/v1/preview/training-jobs/${flow.jobId ?? 'none'}`;
    switch (flow.step) {
      case 0:
        return { method: 'POST', path: '/v1/preview/models', headers, body: JSON.stringify({ entity: 'acme', project: 'soak', name: `policy-${flow.n}`, base_model: CHAT_MODEL }) };
      case 1:
        return { method: 'GET', path: `${model}/checkpoints?limit=20`, headers };
      case 2: {
        const trajectory = { messages_and_choices: MESSAGES, reward: 0.61, metrics: { steps: 3 } };
        return { method: 'POST', path: `${model}/log`, headers, body: JSON.stringify({ split: 'train', trajectory_groups: [{ trajectories: [trajectory, trajectory] }] }) };
      }
      case 3:
        return flow.n % 2 === 0
          ? { method: 'POST', path: '/v1/preview/training-jobs', headers, body: JSON.stringify({ model_id: flow.modelId, trajectory_groups: [], experimental_config: { learning_rate: 1e-5 } }) }
          : { method: 'POST', path: '/v1/preview/sft-training-jobs', headers, body: JSON.stringify({ model_id: flow.modelId, training_data_url: 's3://acme/sft.jsonl' }) };
      case 4:
        return { method: 'GET', path: job, headers };
      case 5:
        return { method: 'GET', path: `${job}/events?limit=100`, headers };
      case 6:
        return { method: 'DELETE', path: `${model}/checkpoints`, headers, body: JSON.stringify({ steps: [10] }) };
      default:
        return { method: 'DELETE', path: model, headers };
    }
  }
}

interface MixEntry {
  readonly weight: number;
  readonly plan: (n: number) => RequestPlan;
}

const full = { mode: 'full' } as const;

/** The mix, in shares of the rate (they add up to 100). Each entry makes the n-th request of its kind. */
function soakMix(flows: PreviewFlows): MixEntry[] {
  return [
    { weight: 35, plan: () => ({ kind: 'chat', method: 'POST', path: '/v1/chat/completions', headers: headersFor(MAIN_KEY, 'chat'), body: JSON_BODY, expect: [200], ledgerRow: true, read: full }) },
    { weight: 14, plan: () => ({ kind: 'chat stream', method: 'POST', path: '/v1/chat/completions', headers: headersFor(MAIN_KEY, 'chat'), body: STREAM_BODY, expect: [200], ledgerRow: true, read: full }) },
    {
      weight: 5,
      plan: () => ({
        kind: 'chat stream, client leaves',
        method: 'POST',
        path: '/v1/chat/completions',
        headers: headersFor(MAIN_KEY, 'chat', { 'x-soak-hold': '1' }),
        body: STREAM_BODY,
        expect: [200],
        ledgerRow: true,
        read: { mode: 'leave-mid-stream', holdMs: 20 },
      }),
    },
    {
      weight: 2,
      plan: () => ({
        kind: 'chat, client leaves first',
        method: 'POST',
        path: '/v1/chat/completions',
        headers: headersFor(MAIN_KEY, 'chat', { 'x-soak-delay-ms': '1500' }),
        body: JSON_BODY,
        expect: [],
        ledgerRow: true,
        read: { mode: 'leave-before-answer', afterMs: 100 },
      }),
    },
    // No project header: the key's default project.
    { weight: 10, plan: () => ({ kind: 'models', method: 'GET', path: '/v1/models', headers: headersFor(MAIN_KEY, undefined), expect: [200], ledgerRow: true, read: full }) },
    { weight: 14, plan: () => flows.next() },
    { weight: 1, plan: () => ({ kind: 'health', method: 'GET', path: '/v1/health', headers: headersFor(MAIN_KEY, 'ops'), expect: [200], ledgerRow: false, read: full }) },
    {
      weight: 4,
      plan: (n): RequestPlan => ({
        kind: '401 bad key',
        method: 'POST',
        path: '/v1/chat/completions',
        // An unknown key, or none at all.
        headers: n % 2 === 0 ? headersFor({ ...MAIN_KEY, secret: 'tg-not-a-key-00000000' }, 'chat') : { 'content-type': JSON_TYPE, 'openai-project': `${MAIN_KEY.team}/chat` },
        body: JSON_BODY,
        expect: [401],
        ledgerRow: false,
        read: full,
      }),
    },
    {
      weight: 2,
      plan: () => ({ kind: '400 bad project', method: 'GET', path: '/v1/models', headers: { ...headersFor(MAIN_KEY, undefined), 'openai-project': 'soak-a/no spaces allowed' }, expect: [400], ledgerRow: false, read: full }),
    },
    {
      weight: 2,
      plan: () => ({ kind: '403 other team', method: 'POST', path: '/v1/chat/completions', headers: { ...headersFor(MAIN_KEY, undefined), 'openai-project': `${RPM_KEY.team}/chat` }, body: JSON_BODY, expect: [403], ledgerRow: false, read: full }),
    },
    {
      weight: 5,
      plan: (n) => ({ kind: '422 invalid body', method: 'POST', path: '/v1/chat/completions', headers: headersFor(MAIN_KEY, 'chat'), body: INVALID_BODIES[n % INVALID_BODIES.length]!, expect: [422], ledgerRow: true, read: full }),
    },
    { weight: 1, plan: () => ({ kind: '404 no route', method: 'GET', path: '/v1/no-such-route', headers: headersFor(MAIN_KEY, 'chat'), expect: [404], ledgerRow: false, read: full }) },
    {
      weight: 2,
      plan: (n) => ({
        kind: '404 not our job',
        method: 'GET',
        path: `/v1/preview/training-jobs/0000${String(n).padStart(8, '0')}-0000-4000-8000-000000000000/events`,
        headers: headersFor(MAIN_KEY, 'train'),
        expect: [404],
        ledgerRow: true,
        read: full,
      }),
    },
    { weight: 1, plan: () => ({ kind: '429 rpm key', method: 'GET', path: '/v1/models', headers: headersFor(RPM_KEY, 'eval'), expect: [200, 429], ledgerRow: true, read: full }) },
    {
      weight: 2,
      plan: () => ({
        kind: '429 concurrency project',
        method: 'POST',
        path: '/v1/chat/completions',
        headers: headersFor(CONCURRENCY_KEY, 'batch', { 'x-soak-hold': '1' }),
        body: STREAM_BODY,
        expect: [200, 429],
        ledgerRow: true,
        read: { mode: 'leave-mid-stream', holdMs: 600 },
      }),
    },
  ];
}

/**
 * The order requests are sent in: each entry's share spread evenly over a cycle of 100 (a
 * weight-w entry every 100/w requests), so every second carries the whole mix.
 */
function interleave(entries: readonly MixEntry[]): MixEntry[] {
  const slots: Array<{ at: number; entry: MixEntry }> = [];
  for (const entry of entries) for (let i = 0; i < entry.weight; i++) slots.push({ at: (i + 0.5) / entry.weight, entry });
  return slots.sort((a, b) => a.at - b.at).map((slot) => slot.entry);
}

/** A steady open-loop load: requests leave at `rate` per second whatever the answers take. */
export class SoakTraffic {
  readonly tally = new Tally();
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private readonly cycle: MixEntry[];
  private readonly perEntry = new Map<MixEntry, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private sequence = 0;

  constructor(private readonly baseUrl: string) {
    this.cycle = interleave(soakMix(new PreviewFlows()));
  }

  /** Sends one request of the mix (or `plan`) and records its outcome; resolves when it is over. */
  launch(plan?: RequestPlan): Promise<Outcome> {
    if (!plan) {
      const entry = this.cycle[this.sequence % this.cycle.length]!;
      const n = this.perEntry.get(entry) ?? 0;
      this.perEntry.set(entry, n + 1);
      plan = entry.plan(n);
    }
    const chosen = plan;
    const sent = send(this.baseUrl, this.agent, `soak-${this.sequence++}`, chosen).then((outcome) => {
      this.tally.record(chosen, outcome);
      return outcome;
    });
    const tracked = sent.then(() => undefined);
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return sent;
  }

  /** Sends the mix at `rate` requests/s for `durationMs`; `onTick` runs every second with the seconds elapsed. */
  async run(rate: number, durationMs: number, onTick: (elapsedSec: number) => Promise<void> | void): Promise<void> {
    const started = performance.now();
    const total = Math.round((rate * durationMs) / 1000);
    let launched = 0;
    let lastTick = 0;
    let ticking: Promise<void> = Promise.resolve();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const elapsed = performance.now() - started;
        const due = Math.min(total, Math.floor((elapsed / 1000) * rate));
        for (; launched < due; launched++) void this.launch();
        const second = Math.floor(elapsed / 1000);
        if (second > lastTick) {
          lastTick = second;
          ticking = ticking.then(() => onTick(second));
        }
        if (launched >= total) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    await ticking;
    await this.drain();
  }

  /** Resolves once every request sent so far is over. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  close(): void {
    this.agent.destroy();
  }
}
