import { afterAll, describe, expect, it } from 'vitest';
import { hostileBodies, inlineEdgeBodies, ordinaryBodies } from '../../fixtures/hostile-bodies/hostile-body-cases.js';
import { forceStreamUsage } from '../../../src/metering/index.js';
import {
  createChatBodyChecker,
  estimateChatTokens,
  MAX_VALIDATION_BODY_BYTES,
  renderValidationBody,
  validateChatBody,
  WorkerPoolError,
  type ChatBodyCheck,
  type ChatBodyChecker,
} from '../../../src/validation/index.js';

const checkers: ChatBodyChecker[] = [];
afterAll(async () => {
  await Promise.all(checkers.map((checker) => checker.close()));
});

function checker(options: Partial<Parameters<typeof createChatBodyChecker>[0]> = {}): ChatBodyChecker {
  const made = createChatBodyChecker({ defaultCompletionTokens: 100, forceStreamUsage: true, ...options });
  checkers.push(made);
  return made;
}

/** The check's answer, which must come synchronously. */
function checkNow(on: ChatBodyChecker, body: string | Buffer, contentType = 'application/json'): ChatBodyCheck {
  const result = on.check(Buffer.isBuffer(body) ? body : Buffer.from(body), contentType);
  if (result instanceof Promise) throw new Error('expected a synchronous answer');
  return result;
}

/** The bytes a passing check forwards. */
function forwarded(result: ChatBodyCheck): Buffer | undefined {
  return result.ok ? result.facts.forwardBytes : undefined;
}

const onLoop = checker();

describe('ChatBodyChecker: ordinary bodies are checked synchronously on the event loop', () => {
  it('answers a small valid body with its facts and forwards the very same bytes', () => {
    const text = '{"model":"m","messages":[{"role":"user","content":"hello there"}],"max_tokens":7}';
    const raw = Buffer.from(text);
    const result = onLoop.check(raw, 'application/json');
    expect(result).not.toBeInstanceOf(Promise);
    expect(result).toEqual({
      ok: true,
      facts: { model: 'm', estimatedTokens: 10, promptChars: 11, stream: false, forwardBytes: raw, usageForced: false, sampling: { maxTokens: 7 } },
    });
    expect(forwarded(result as ChatBodyCheck)).toBe(raw);
    expect(estimateChatTokens(JSON.parse(text) as Record<string, unknown>, 100)).toBe(10);
  });

  it('adds include_usage to a stream exactly as forceStreamUsage does', () => {
    const text = '{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"abcd"}]}],"stream":true}';
    const result = checkNow(onLoop, text);
    const forced = forceStreamUsage(Buffer.from(text), JSON.parse(text) as Record<string, unknown>);
    expect(result).toEqual({
      ok: true,
      facts: { model: 'm', estimatedTokens: 101, promptChars: 4, stream: true, forwardBytes: forced.bytes, usageForced: true, sampling: { stream: true } },
    });
  });

  it('leaves a stream as sent when forceStreamUsage is off', () => {
    const raw = Buffer.from('{"model":"m","messages":[],"stream":true}');
    const result = checker({ forceStreamUsage: false }).check(raw, undefined) as ChatBodyCheck;
    expect(result).toMatchObject({ ok: true, facts: { stream: true, usageForced: false, forwardBytes: raw } });
  });

  it('answers a small invalid body with the 422 text of validateChatBody and renderValidationBody', () => {
    const raw = Buffer.from('{"model":7,"messages":[1,{},"x"]}');
    const validation = validateChatBody(raw, 'application/json');
    if (validation.ok) throw new Error('expected a failure');
    expect(checkNow(onLoop, raw)).toEqual({ ok: false, body: renderValidationBody(validation.detail), errorCount: 3 });
  });

  for (const { name, body, contentType } of [...ordinaryBodies(), ...inlineEdgeBodies()]) {
    it(`keeps a body on the event loop: ${name}`, () => {
      const result = onLoop.check(body, contentType);
      expect(result).not.toBeInstanceOf(Promise);
      // Identity, not deep equality: the very bytes received are forwarded.
      expect(forwarded(result as ChatBodyCheck) === body).toBe(true);
    });
  }
});

describe('ChatBodyChecker: costly bodies are checked in a worker', () => {
  for (const { name, body, contentType } of hostileBodies()) {
    it(`sends ${name} to a worker and answers within bounds`, async () => {
      const pending = onLoop.check(body, contentType);
      expect(pending).toBeInstanceOf(Promise);
      const result = await pending;
      if (result.ok) {
        expect(forwarded(result) === body).toBe(true);
      } else {
        expect(Buffer.byteLength(result.body)).toBeLessThanOrEqual(MAX_VALIDATION_BODY_BYTES);
        expect((JSON.parse(result.body) as { detail: unknown[] }).detail.length).toBeGreaterThan(0);
      }
    });
  }

  it('sends a 20 KB body nested 100 levels deep to a worker', async () => {
    const body = Buffer.from(`{"model":"m","messages":[],"x":${'['.repeat(100)}${']'.repeat(100)},"pad":"${'p'.repeat(20_000)}"}`);
    const pending = onLoop.check(body, 'application/json');
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toMatchObject({ ok: true, facts: { model: 'm' } });
  });

  it('sends a 20 KB body that fails validation to a worker for its 422', async () => {
    const body = Buffer.from(`{"messages":[],"pad":"${'p'.repeat(20_000)}"}`);
    const pending = onLoop.check(body, 'application/json');
    expect(pending).toBeInstanceOf(Promise);
    expect(await pending).toMatchObject({ ok: false, errorCount: 1 });
  });

  it('adds include_usage to a stream nested too deep for JSON.stringify', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const body = Buffer.from(`{"model":"m","messages":[],"stream":true,"stream_options":{"x":1},"deep":${deep}}`);
    const result = await onLoop.check(body, 'application/json');
    expect(result).toMatchObject({ ok: true, facts: { usageForced: true, stream: true } });
    expect(forwarded(result)?.toString()).toBe(`{"model":"m","messages":[],"stream":true,"stream_options":{"x":1,"include_usage":true},"deep":${deep}}`);
  });

  it('checks a body in shared memory in a worker, forwarding those very bytes', async () => {
    const text = `{"model":"m","messages":[{"role":"user","content":"${'x'.repeat(200_000)}"}]}`;
    const shared = Buffer.from(new SharedArrayBuffer(text.length));
    shared.write(text);
    const pending = onLoop.check(shared, 'application/json');
    expect(pending).toBeInstanceOf(Promise);
    const result = await pending;
    expect(result).toMatchObject({ ok: true, facts: { model: 'm', usageForced: false } });
    expect(forwarded(result) === shared).toBe(true);
    expect(onLoop.inlineMaxBytes).toBe(128 * 1024);
  });

  it('gives the same answers in a worker as on the event loop', async () => {
    const inWorker = checker({ inlineMaxBytes: 0 });
    const bodies = ['{"model":"m","messages":[],"stream":true}', '{"model":1}', '[1', '{"model":"m","messages":[NaN]}', '\ufeff{"a":1.0}'];
    for (const text of bodies) {
      const pending = inWorker.check(Buffer.from(text), 'application/json');
      expect(pending).toBeInstanceOf(Promise);
      expect(await pending).toEqual(checkNow(onLoop, text));
    }
  });
});

describe('ChatBodyChecker: workers', () => {
  it('fails only the check whose body exhausted a worker\'s heap, and replaces the worker', async () => {
    const small = checker({ inlineMaxBytes: 0, workers: 1, workerHeapMb: 32 });
    const huge = Buffer.from(`{"model":"m","messages":[${'1,'.repeat(4_000_000)}1]}`);
    await expect(small.check(huge, 'application/json')).rejects.toBeInstanceOf(WorkerPoolError);
    expect(await small.check(Buffer.from('{"model":"m","messages":[]}'), 'application/json')).toMatchObject({ ok: true });
  });

  it('rejects checks once closed', async () => {
    const closing = checker({ inlineMaxBytes: 0 });
    expect(await closing.check(Buffer.from('{"model":"m","messages":[]}'), undefined)).toMatchObject({ ok: true });
    await closing.close();
    await expect(closing.check(Buffer.from('{}'), undefined)).rejects.toBeInstanceOf(WorkerPoolError);
  });

  it('refuses options that cannot work', () => {
    expect(() => checker({ workers: 0 })).toThrow(RangeError);
    expect(() => checker({ inlineMaxBytes: -1 })).toThrow(RangeError);
  });
});
