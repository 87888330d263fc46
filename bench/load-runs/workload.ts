import { createHash } from 'node:crypto';

/** The requests the load is made of, shared by the parent (sends them) and the targets (accept them). */

export const BENCH_KEY = 'tg-bench-5c0d1e2f3a4b5c6d7e8f9a0b';
export const BENCH_KEY_SHA256 = createHash('sha256').update(BENCH_KEY).digest('hex');
export const BENCH_TEAM = 'bench-team';
export const BENCH_PROJECT = 'chat-eval';
export const CHAT_PATH = '/v1/chat/completions';

export const BENCH_MODEL = 'wandb-artifact:///acme/rl-demo/qwen3-14b:step42';
const MODEL = BENCH_MODEL;
const MESSAGES = [
  { role: 'system', content: 'You are a concise assistant for the training team.' },
  { role: 'user', content: 'Summarise the last gradient step: loss 0.412, grad_norm 1.73, reward 0.61. Is training stable?' },
];

/** ~300 bytes: a realistic chat body with max_tokens, so the limiter reserves a known estimate. */
export const CHAT_BODY = JSON.stringify({ model: MODEL, messages: MESSAGES, temperature: 0.7, top_p: 0.95, max_tokens: 64 });

/** The streaming case sends no include_usage: with forceStreamUsage the gateway adds and strips it. */
export const STREAM_BODY = JSON.stringify({ model: MODEL, messages: MESSAGES, temperature: 0.7, max_tokens: 64, stream: true });

export const REQUEST_HEADERS: Readonly<Record<string, string>> = {
  authorization: `Bearer ${BENCH_KEY}`,
  'openai-project': `${BENCH_TEAM}/${BENCH_PROJECT}`,
  'content-type': 'application/json',
};

/** One request a load run repeats on every connection. */
export interface LoadRequest {
  readonly method: 'GET' | 'POST';
  /** Path and query. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** What every run sends unless a target is given another request: the non-streaming chat. */
export const CHAT_REQUEST: LoadRequest = { method: 'POST', path: CHAT_PATH, headers: REQUEST_HEADERS, body: CHAT_BODY };

/** A model the events-polling client trains (`--events`): created through each target, so a gateway records it as the bench team's. */
export const POLLED_MODEL_BODY = JSON.stringify({ entity: 'acme', project: 'rl-demo', name: 'bench-events-poller', base_model: 'Qwen/Qwen3-14B', return_existing: false });

/** A small RL training-job creation for that model (UPSTREAM.md shape): one group of two scored trajectories. */
export function trainingJobBody(modelId: string): string {
  const trajectory = (reward: number, answer: string): unknown => ({
    messages_and_choices: [
      { role: 'user', content: 'What is 17 * 23?' },
      { role: 'assistant', content: answer },
    ],
    reward,
    metrics: { correct: reward > 0.5 ? 1 : 0 },
  });
  return JSON.stringify({ model_id: modelId, trajectory_groups: [{ trajectories: [trajectory(1, '391'), trajectory(0, '401')] }], experimental_config: { learning_rate: 1e-5 } });
}

/**
 * A client polling a job's events once it has seen up to `evt_0046`: the fake upstream answers
 * the two events that came after it (UPSTREAM.md: strictly after the cursor, ascending).
 */
export const eventsPath = (jobId: string): string => `/v1/preview/training-jobs/${encodeURIComponent(jobId)}/events?after=evt_0046&limit=100`;

/** The headers of a request without a body (a poll): the chat headers less content-type. */
export function headersWithoutBody(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type'));
}

/**
 * Every limit kind on every scope, far above anything a 2-core loopback run can reach: checked
 * and charged, never hit. The cost budgets are in the price currency (USD) of BENCH_PRICES.
 */
export const NEVER_REACHED_LIMITS = {
  rpm: 1_000_000_000,
  tpm: 1_000_000_000_000,
  concurrency: 100_000,
  tokensPerDay: 1_000_000_000_000,
  costPerDay: 1_000_000,
  costPerMonth: 9_000_000,
};

/** A price for the bench model, so every request has a cost to reserve, settle and write to the ledger. */
export const BENCH_PRICES = { currency: 'USD', models: { 'wandb-artifact:///*': { prompt: 0.1, completion: 0.4 } } };
