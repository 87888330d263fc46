import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { ModelIdWatch } from '../../../src/ownership/index.js';
import { BufferBudget } from '../../../src/proxy/index.js';

/** Writes `parts` into a watch, as an upload arrives; resolves with what model_id it found (or the refusal). */
async function feed(watch: ModelIdWatch, parts: string[]): Promise<string | GatewayError> {
  const found = watch.modelId.then(
    (id) => id,
    (err: unknown) => err as GatewayError,
  );
  for (const part of parts) {
    if (watch.destroyed) break;
    watch.write(Buffer.from(part));
  }
  return found;
}

/** Collects what the watch lets through. */
function collect(watch: ModelIdWatch): Buffer[] {
  const out: Buffer[] = [];
  watch.on('data', (chunk: Buffer) => out.push(chunk));
  return out;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ModelIdWatch and the buffered-bytes budget', () => {
  it('holds bytes, counted, only until the first model_id is read; once released streams on, keeping back the last chunk until the end makes the body certain', async () => {
    const budget = new BufferBudget(1000);
    const watch = new ModelIdWatch(10_000, budget);
    const out = collect(watch);
    watch.write(Buffer.from('{"model_id":"m-1",'));
    expect(await watch.modelId).toBe('m-1');
    expect(budget.used).toBe(Buffer.byteLength('{"model_id":"m-1",'));
    watch.release();
    expect(budget.used).toBe(0);
    watch.write(Buffer.from('"trajectory_groups":[1,2,3],'));
    watch.write(Buffer.from('"x":NaN'));
    await tick();
    // All but the last chunk has gone on; the last waits for the next one or the end.
    expect(Buffer.concat(out).toString()).toBe('{"model_id":"m-1","trajectory_groups":[1,2,3],');
    watch.end('}');
    await once(watch, 'end');
    expect(Buffer.concat(out).toString()).toBe('{"model_id":"m-1","trajectory_groups":[1,2,3],"x":NaN}');
    expect(budget.used).toBe(0);
  });

  it.each([
    ['a second model_id after release', ['{"model_id":"mine",', '"t":[1,2],', '"model_id":"theirs"}'], 'The body has more than one top-level "model_id".'],
    ['a second, escaped model_id after a NaN', ['{"model_id":"mine",', '"x":NaN,', '"model\\u005fid":"theirs"}'], 'The body has more than one top-level "model_id".'],
    ['a broken end', ['{"model_id":"mine",', '"t":[1,2],', '"x":1} x'], 'The body must be a JSON object with a top-level "model_id".'],
  ])('errors the stream with 400 on %s, never letting the end of the body through', async (_what, parts, message) => {
    const watch = new ModelIdWatch(10_000);
    const out = collect(watch);
    const errored = once(watch, 'error');
    watch.write(Buffer.from(parts[0]!));
    await watch.modelId;
    watch.release();
    for (const part of parts.slice(1)) watch.write(Buffer.from(part));
    watch.end();
    const [err] = (await errored) as [GatewayError];
    expect([err.status, err.code, err.param, err.message]).toEqual([400, 'invalid_request', 'model_id', message]);
    // What went on is a strict prefix of the body: its last chunks never did.
    expect(Buffer.concat(out).toString()).toBe(parts.slice(0, 1).join(''));
  });

  it('reads on while the model is checked, up to its hold limit, then waits (backpressure) and refuses what it read meanwhile', async () => {
    const budget = new BufferBudget(1000);
    const watch = new ModelIdWatch(64, budget);
    watch.write(Buffer.from('{"model_id":"m-1","t":['));
    await watch.modelId;
    watch.write(Buffer.from(`"${'x'.repeat(50)}",`));
    watch.write(Buffer.from('"more"],"model_id":"m-2"}'));
    await tick();
    // Past the limit nothing more is read (the third write waits), so nothing more is known.
    expect(watch.refused).toBeUndefined();
    expect(budget.used).toBe(Buffer.byteLength(`{"model_id":"m-1","t":["${'x'.repeat(50)}",`));
    watch.release();
    const [err] = (await once(watch, 'error')) as [GatewayError];
    expect(err.message).toBe('The body has more than one top-level "model_id".');
    expect(budget.used).toBe(0);
  });

  it('refuses a body whose model_id is not within its hold limit (400, connection closed), holding nothing after', async () => {
    const budget = new BufferBudget(1000);
    const watch = new ModelIdWatch(64, budget);
    const err = (await feed(watch, ['{"trajectory_groups":[', `"${'x'.repeat(40)}",`, `"${'y'.repeat(40)}"],"model_id":"m-1"}`])) as GatewayError;
    expect([err.status, err.code, err.param, err.headers]).toEqual([400, 'invalid_request', 'model_id', { connection: 'close' }]);
    expect(err.message).toBe('The body has no top-level "model_id" within its first 64 bytes (server.bodyLimit).');
    expect(budget.used).toBe(0);
  });

  it('refuses a model_id that ends just past the hold limit, though it came in the same chunk', async () => {
    const watch = new ModelIdWatch(10);
    const err = (await feed(watch, ['{"model_id":"m-1"}'])) as GatewayError;
    expect(err.message).toBe('The body has no top-level "model_id" within its first 10 bytes (server.bodyLimit).');
  });

  it('refuses a second model_id in the very chunk of the first, before announcing either', async () => {
    const watch = new ModelIdWatch(10_000);
    const err = (await feed(watch, ['{"model_id":"mine","x":NaN,"model_id":"theirs"}'])) as GatewayError;
    expect([err.status, err.message]).toEqual([400, 'The body has more than one top-level "model_id".']);
  });

  it('refuses the upload with 503 overloaded when holding it would pass server.maxBufferedBytes, and holds nothing after', async () => {
    const budget = new BufferBudget(64);
    const watch = new ModelIdWatch(10_000, budget);
    const refusal = await feed(watch, [`{"trajectory_groups":["${'x'.repeat(40)}",`, `"${'y'.repeat(40)}"],`, '"model_id":"m-1"}']);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect([(refusal as GatewayError).status, (refusal as GatewayError).code]).toEqual([503, 'overloaded']);
    expect(budget.used).toBe(0);
  });

  it('gives the held bytes back when the upload breaks off before model_id', async () => {
    const budget = new BufferBudget(1000);
    const watch = new ModelIdWatch(10_000, budget);
    watch.write(Buffer.from('{"trajectory_groups":[1,2,3]'));
    expect(budget.used).toBeGreaterThan(0);
    watch.destroy(new Error('client went away'));
    await watch.modelId.catch(() => undefined);
    expect(budget.used).toBe(0);
  });

  it('ignores a release before any model_id is read: nothing goes on until one is', async () => {
    const watch = new ModelIdWatch(10_000);
    const out = collect(watch);
    watch.write(Buffer.from('{"trajectory_groups":'));
    watch.write(Buffer.from('[1,2],'));
    watch.release();
    await tick();
    expect(out).toEqual([]);
    watch.write(Buffer.from('"model_id":"m-1"}'));
    expect(await watch.modelId).toBe('m-1');
    watch.release();
    watch.end();
    await once(watch, 'end');
    expect(Buffer.concat(out).toString()).toBe('{"trajectory_groups":[1,2],"model_id":"m-1"}');
  });

  it('ignores a second release: the chunk it keeps back until the end is not lost', async () => {
    const watch = new ModelIdWatch(10_000);
    const out = collect(watch);
    watch.write(Buffer.from('{"model_id":"m-1",'));
    await watch.modelId;
    watch.release();
    watch.write(Buffer.from('"t":[1,2]'));
    await tick();
    watch.release();
    watch.end('}');
    await once(watch, 'end');
    expect(Buffer.concat(out).toString()).toBe('{"model_id":"m-1","t":[1,2]}');
  });

  it('lets a body that ended while its model was checked go whole on release, and ends', async () => {
    const watch = new ModelIdWatch(10_000);
    const out = collect(watch);
    watch.write(Buffer.from('{"model_id":"m-1",'));
    watch.write(Buffer.from('"t":[1,2]'));
    watch.end('}');
    await watch.modelId;
    await tick();
    expect(out).toEqual([]);
    watch.release();
    await once(watch, 'end');
    expect(Buffer.concat(out).toString()).toBe('{"model_id":"m-1","t":[1,2]}');
  });

  it('errors the stream with 400 on a body cut short after release, keeping its last chunk back', async () => {
    const watch = new ModelIdWatch(10_000);
    const out = collect(watch);
    const errored = once(watch, 'error');
    watch.write(Buffer.from('{"model_id":"m-1",'));
    await watch.modelId;
    watch.release();
    watch.write(Buffer.from('"t":[1,'));
    watch.end();
    const [err] = (await errored) as [GatewayError];
    expect([err.status, err.code, err.param, err.message]).toEqual([400, 'invalid_request', 'model_id', 'The body must be a JSON object with a top-level "model_id".']);
    expect(Buffer.concat(out).toString()).toBe('{"model_id":"m-1",');
  });
});
