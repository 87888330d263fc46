import type { IncomingMessage } from 'node:http';
import type { Admission } from '../../src/limits/index.js';
import type { ResponseTap, TapResult } from '../../src/metering/index.js';
import { admissionDescriber } from '../../src/pipeline/index.js';
import type { RequestTrace, Tracing } from '../../src/tracing/index.js';

/**
 * One traced chat request through tracing's own calls, as the pipeline makes them (no HTTP, no
 * other feature): for the measurements that count what tracing alone costs. In stages, so a
 * measurement can stop after any of them.
 */

export type TracedChatStage = 'start' | 'untraced steps' | 'steps' | 'upstream' | 'end';

const reply = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-abc123',
    object: 'chat.completion',
    model: 'OpenPipe/Qwen3-14B-Instruct',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how can I help you today?' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 20, total_tokens: 32 },
  }),
);
const request = { headers: { 'user-agent': 'bench', 'content-type': 'application/json' }, url: '/v1/chat/completions' } as IncomingMessage;
const tapResult = { tail: null, usage: null, invalidUsage: false, model: null, contentChunks: 0 } as unknown as TapResult;
const meteringTap: ResponseTap = { rewrites: false, write: (chunk) => chunk, end: () => tapResult } as ResponseTap;

const auth = async (): Promise<number> => 1;
const validate = async (): Promise<number> => 2;
const admit = async (): Promise<Admission> => ({ headers: {}, finish: () => undefined, checks: [{ scope: 'key', limit: 'rpm' }] });
/** The pipeline's own description of the limits step. */
const describeAdmission = admissionDescriber();

/** A chat request up to `stage` ("untraced steps": the same steps called directly, what a request allocates for them anyway). */
export async function tracedChat(tracing: Tracing, stage: TracedChatStage = 'end'): Promise<void> {
  const trace: RequestTrace = tracing.startRequest(request, '/v1/chat/completions', 'POST');
  if (stage === 'start') return;
  if (stage === 'untraced steps') {
    await auth();
    await validate();
    await admit();
    return;
  }
  trace.begin('auth');
  await auth();
  trace.end();
  trace.begin('validate');
  await validate();
  trace.end();
  trace.begin('limits');
  const admission = await admit();
  trace.end(admission, describeAdmission);
  if (stage === 'steps') return;
  trace.startUpstream({ upstream: 'inference', method: 'POST', chat: { model: 'OpenPipe/Qwen3-14B-Instruct', sampling: { maxTokens: 64 }, raw: undefined } });
  trace.injectInto({});
  trace.upstreamAnswered(200);
  const watched = trace.watchReply(meteringTap, false);
  watched.write(reply);
  watched.end();
  if (stage === 'upstream') return;
  trace.finish({ status: 200, team: 'research', project: 'bench', keyId: 'k_bench', costNanos: 123_000, inputTokens: 12, outputTokens: 20, responseModel: 'OpenPipe/Qwen3-14B-Instruct', aborted: false });
}
