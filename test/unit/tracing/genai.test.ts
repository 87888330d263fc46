import { describe, expect, it } from 'vitest';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { readReply, requestAttributes, samplerFor } from '../../../src/tracing/index.js';
import { chatFactsOf } from '../../../src/validation/index.js';

describe('GenAI attributes of a chat request', () => {
  // As the pipeline makes them: the sampling settings from validation's facts, the raw bytes beside.
  const attributesOf = (value: Record<string, unknown>, captureContent: boolean) => {
    const raw = Buffer.from(JSON.stringify(value));
    const { sampling } = chatFactsOf(raw, { model: 'm', messages: [], ...value }, { defaultCompletionTokens: 1, forceStreamUsage: false });
    return requestAttributes(sampling, raw, captureContent);
  };

  it('takes max_completion_tokens over max_tokens, and the sampling settings', () => {
    expect(attributesOf({ model: 'm', max_tokens: 10, max_completion_tokens: 20, temperature: 0, top_p: 0.9, stream: false, messages: [] }, false)).toEqual({
      'gen_ai.request.max_tokens': 20,
      'gen_ai.request.temperature': 0,
      'gen_ai.request.top_p': 0.9,
      'gen_ai.request.stream': false,
    });
    expect(attributesOf({ max_tokens: 10, stream: true }, false)).toEqual({ 'gen_ai.request.max_tokens': 10, 'gen_ai.request.stream': true });
  });

  it('leaves out a setting of the wrong type', () => {
    expect(attributesOf({ max_tokens: '10', temperature: null, top_p: 'high', stream: 'yes' }, false)).toEqual({});
  });

  it('writes the messages only when content is captured, structured content as JSON text', () => {
    const messages = [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }];
    expect(attributesOf({ messages }, false)).toEqual({});
    expect(JSON.parse(String(attributesOf({ messages }, true)['gen_ai.input.messages']))).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
      { role: 'user', parts: [{ type: 'text', content: '[{"type":"text","text":"hi"}]' }] },
    ]);
  });

  it('gives no messages for a body it cannot read', () => {
    expect(requestAttributes({}, Buffer.from('{"model":'), true)).toEqual({});
    expect(requestAttributes({}, undefined, true)).toEqual({});
  });
});

describe('readReply', () => {
  it('reads a JSON reply', () => {
    const reply = { id: 'cmpl-1', choices: [{ message: { content: 'a' }, finish_reason: 'stop' }, { message: { content: 'b' }, finish_reason: 'length' }] };
    expect(readReply(Buffer.from(JSON.stringify(reply)))).toEqual({ id: 'cmpl-1', finishReasons: ['stop', 'length'], text: 'ab' });
  });

  it('reads an SSE stream chunk by chunk, skipping [DONE], comments and a cut-off last line', () => {
    const chunk = (content: string | undefined, finish: string | null) => `data: ${JSON.stringify({ id: 'cmpl-2', choices: [{ delta: content === undefined ? {} : { content }, finish_reason: finish }] })}\n\n`;
    const stream = `: keep-alive\n\n${chunk('Hel', null)}${chunk('lo', null)}${chunk(undefined, 'stop')}data: [DONE]\n\ndata: {"id":"cmpl-2","choi`;
    expect(readReply(Buffer.from(stream))).toEqual({ id: 'cmpl-2', finishReasons: ['stop'], text: 'Hello' });
  });
});

describe('samplerFor', () => {
  it('maps the OTEL_TRACES_SAMPLER names', () => {
    expect(samplerFor('always_on', 0.5)).toBeInstanceOf(AlwaysOnSampler);
    expect(samplerFor('always_off', 0.5)).toBeInstanceOf(AlwaysOffSampler);
    expect(samplerFor('traceidratio', 0.5).toString()).toBe(new TraceIdRatioBasedSampler(0.5).toString());
    const parentBased = samplerFor('parentbased_traceidratio', 0.25);
    expect(parentBased).toBeInstanceOf(ParentBasedSampler);
    expect(parentBased.toString()).toContain('TraceIdRatioBased{0.25}');
    expect(samplerFor('parentbased_always_off', 1).toString()).toContain('AlwaysOffSampler');
  });

  it('keeps every trace at ratio 1 without hashing trace ids, and still follows the parent', () => {
    expect(samplerFor('traceidratio', 1)).toBeInstanceOf(AlwaysOnSampler);
    const parentBased = samplerFor('parentbased_traceidratio', 1);
    expect(parentBased).toBeInstanceOf(ParentBasedSampler);
    expect(parentBased.toString()).toBe(new ParentBasedSampler({ root: new AlwaysOnSampler() }).toString());
    expect(samplerFor('traceidratio', 0.999).toString()).toBe(new TraceIdRatioBasedSampler(0.999).toString());
  });
});
