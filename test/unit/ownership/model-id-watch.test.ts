import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { ModelIdWatch } from '../../../src/ownership/model-id-watch.js';
import { BufferBudget } from '../../../src/proxy/buffer-budget.js';

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

describe('ModelIdWatch and the buffered-bytes budget', () => {
  it('holds the whole body, counted, until its end makes model_id certain, and gives the bytes back once released', async () => {
    const budget = new BufferBudget(1000);
    const watch = new ModelIdWatch(10_000, budget);
    let settled = false;
    const found = watch.modelId.finally(() => (settled = true));
    watch.write(Buffer.from('{"trajectory_groups":[1,2,3],'));
    watch.write(Buffer.from('"model_id":"m-1",'));
    watch.write(Buffer.from('"x":NaN'));
    // A later "model_id" could still come: nothing is decided, all of it is held.
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(budget.used).toBe(Buffer.byteLength('{"trajectory_groups":[1,2,3],"model_id":"m-1","x":NaN'));
    watch.end('}');
    expect(await found).toBe('m-1');
    const out: Buffer[] = [];
    watch.on('data', (chunk: Buffer) => out.push(chunk));
    watch.release();
    await once(watch, 'end');
    expect(budget.used).toBe(0);
    expect(Buffer.concat(out).toString()).toBe('{"trajectory_groups":[1,2,3],"model_id":"m-1","x":NaN}');
  });

  it('refuses a second model_id after a NaN (Python reads on and takes the last), holding nothing after', async () => {
    const budget = new BufferBudget(1000);
    const watch = new ModelIdWatch(10_000, budget);
    const refusal = feed(watch, ['{"model_id":"mine","x":NaN,', '"model_id":"theirs"}']);
    watch.end();
    const err = (await refusal) as GatewayError;
    expect([err.status, err.code, err.param, err.message]).toEqual([400, 'invalid_request', 'model_id', 'The body has more than one top-level "model_id".']);
    expect(budget.used).toBe(0);
  });

  it('refuses a chunked body past its hold limit (400, connection closed) without reading on, holding nothing after', async () => {
    const budget = new BufferBudget(1000);
    const watch = new ModelIdWatch(64, budget);
    const err = (await feed(watch, ['{"model_id":"m-1","trajectory_groups":[', `"${'x'.repeat(40)}",`, `"${'y'.repeat(40)}"]}`])) as GatewayError;
    expect([err.status, err.code, err.param, err.headers]).toEqual([400, 'invalid_request', 'model_id', { connection: 'close' }]);
    expect(err.message).toBe('The body is over 64 bytes (server.bodyLimit): its top-level "model_id" cannot be read with certainty.');
    expect(budget.used).toBe(0);
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
});
