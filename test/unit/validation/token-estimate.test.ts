import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateChatTokens, promptCharacters } from '../../../src/validation/index.js';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather in a city, "quoted"\nover two lines',
      parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', maximum: 7 } }, required: ['city'] },
    },
  },
];
const FUNCTIONS = [{ name: 'lookup', parameters: { type: 'object', properties: { id: { type: 'number' } } } }];
const RESPONSE_FORMAT = { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: { type: 'object' } } };
const TOOL_CALLS = [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }];

/** What SPEC 6.3's "prompt characters" counts of a part other than a message's content: its JSON text. */
const json = (value: unknown): number => JSON.stringify(value).length;

describe('the prompt estimate counts every part of the body the model reads (SPEC 6.3, 14.3)', () => {
  it('counts tools, functions, response_format, tool_choice, function_call and prediction as their JSON text, and nothing the model does not read', () => {
    const body = {
      model: 'm',
      messages: [],
      tools: TOOLS,
      functions: FUNCTIONS,
      response_format: RESPONSE_FORMAT,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      function_call: 'auto',
      prediction: { type: 'content', content: 'The weather in Paris is' },
      max_completion_tokens: 0,
      // Settings, not text the model reads.
      temperature: 0.2,
      metadata: { team: 'a' },
      user: 'u-1',
      stop: ['\n'],
      logit_bias: { '50256': -100 },
    };
    const expected =
      json(TOOLS) + json(FUNCTIONS) + json(RESPONSE_FORMAT) + json(body.tool_choice) + json('auto') + json(body.prediction);
    expect(promptCharacters(body)).toBe(expected);
    expect(estimateChatTokens(body, 100)).toBe(Math.ceil(expected / 4));
  });

  it("counts a message's content text and its tool_calls and function_call, not its role", () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: TOOL_CALLS },
        { role: 'assistant', content: [{ type: 'text', text: 'abcd' }], function_call: { name: 'lookup', arguments: '{"id":1}' } },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    };
    const expected = 'Weather in Paris?'.length + json(TOOL_CALLS) + 4 + json({ name: 'lookup', arguments: '{"id":1}' }) + 'sunny'.length;
    expect(promptCharacters(body)).toBe(expected);
  });

  it('reserves tools alone: empty messages with a tools array are not an empty prompt', () => {
    const tools = [{ type: 'function', function: { name: 'f', description: 'x'.repeat(4000) } }];
    expect(estimateChatTokens({ model: 'm', messages: [], tools, max_completion_tokens: 0 }, 100)).toBe(Math.ceil(json(tools) / 4));
    // A body of messages alone is estimated as before.
    expect(estimateChatTokens({ model: 'm', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 7 }, 100)).toBe(10);
    expect(estimateChatTokens({ model: 'm', messages: [] }, 100)).toBe(100);
  });

  it('measures any JSON value exactly as JSON.stringify writes it', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(promptCharacters({ model: 'm', messages: [], tools: value })).toBe(json(value));
      }),
      { numRuns: 300 },
    );
    // An own `__proto__` key (as JSON.parse makes it), escapes, a lone surrogate, awkward numbers.
    const awkward = JSON.parse('{"__proto__":{"a":1},"\\u2028":"\\ud800 lone","\\u0001":[-0,1e21,0.1,true,false,null]}') as unknown;
    expect(promptCharacters({ model: 'm', messages: [], response_format: awkward })).toBe(json(awkward));
  });

  it('counts a part nested far deeper than the call stack without throwing', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(promptCharacters({ model: 'm', messages: [], tools: deep })).toBe(200_000 * 2 + 6);
  });
});
