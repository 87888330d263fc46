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
  it('counts the bytes it holds back until model_id is known, and gives them back once released', async () => {
    const budget = new BufferBudget(1000);
    const watch = new ModelIdWatch(10_000, budget);
    const id = await feed(watch, ['{"trajectory_groups":[1,2,3],', '"model_id":"m-1",', '"x":1']);
    expect(id).toBe('m-1');
    expect(budget.used).toBe(Buffer.byteLength('{"trajectory_groups":[1,2,3],"model_id":"m-1",'));
    const out: Buffer[] = [];
    watch.on('data', (chunk: Buffer) => out.push(chunk));
    watch.release();
    watch.end('}');
    await once(watch, 'end');
    expect(budget.used).toBe(0);
    expect(Buffer.concat(out).toString()).toBe('{"trajectory_groups":[1,2,3],"model_id":"m-1","x":1}');
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
