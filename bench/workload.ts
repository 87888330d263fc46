import { createHash } from 'node:crypto';

/** The one request the load is made of, shared by the parent (sends it) and the targets (accept it). */

export const BENCH_KEY = 'tg-bench-5c0d1e2f3a4b5c6d7e8f9a0b';
export const BENCH_KEY_SHA256 = createHash('sha256').update(BENCH_KEY).digest('hex');
export const BENCH_TEAM = 'bench-team';
export const BENCH_PROJECT = 'chat-eval';
export const CHAT_PATH = '/v1/chat/completions';

const MODEL = 'wandb-artifact:///acme/rl-demo/qwen3-14b:step42';
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
