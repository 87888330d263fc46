import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig, type UpstreamConfig } from '../../../src/config/index.js';
import { TargetPool } from '../../../src/proxy/index.js';

/** An upstream config as the schema fills it, from the keys a test sets. */
function upstreamConfig(inference: Record<string, unknown>): UpstreamConfig {
  return validateConfig({ upstreams: { service: { url: 'http://svc:1' }, inference } }, 'test').upstreams.inference;
}

describe('TargetPool (SPEC 19)', () => {
  const pools: TargetPool[] = [];
  const pool = (inference: Record<string, unknown>, events?: ConstructorParameters<typeof TargetPool>[2]): TargetPool => {
    const built = new TargetPool('inference', upstreamConfig(inference), events);
    pools.push(built);
    return built;
  };
  afterEach(() => {
    for (const built of pools.splice(0)) built.close();
  });

  it('names each target host:port, the default port included', () => {
    const p = pool({ targets: [{ url: 'http://a:9001' }, { url: 'https://b' }, { url: 'http://c/' }] });
    expect(p.targets.map((t) => t.key)).toEqual(['a:9001', 'b:443', 'c:80']);
  });

  it('always answers the one target of a single url, and none once it was tried', () => {
    const p = pool({ url: 'http://a:1' });
    expect(p.several).toBe(false);
    expect(p.pick(0)).toBe(p.targets[0]);
    expect(p.pick(0, [p.targets[0]!])).toBeUndefined();
  });

  it('shares round-robin turns by weight, evenly spread', () => {
    const p = pool({ targets: [{ url: 'http://a:1', weight: 2 }, { url: 'http://b:1' }], balance: 'round-robin' });
    const keys = Array.from({ length: 6 }, () => p.pick(0)!.key);
    expect(keys).toEqual(['a:1', 'b:1', 'a:1', 'a:1', 'b:1', 'a:1']);
  });

  it('sends least-outstanding to the target with the fewest requests in flight for its weight', () => {
    const p = pool({ targets: [{ url: 'http://a:1' }, { url: 'http://b:1', weight: 3 }] });
    const [a, b] = p.targets;
    a!.outstanding = 1; // (1+1)/1 = 2
    b!.outstanding = 2; // (2+1)/3 = 1: fewer for its weight
    expect(p.pick(0)).toBe(b);
    expect(p.pick(0, [b!])).toBe(a);
  });

  it('ejects after failures in a row, doubling the back-off up to maxMs, and a good answer resets it', () => {
    const ejected: string[] = [];
    const p = pool({ targets: [{ url: 'http://a:1' }, { url: 'http://b:1' }], eject: { failures: 2, baseMs: 100, maxMs: 300 } }, {
      targetAdded: () => undefined,
      ejected: (_upstream, target) => ejected.push(target),
    });
    const a = p.targets[0]!;
    p.failed(a, 1000);
    expect(a.isUp(1000)).toBe(true);
    p.failed(a, 1000);
    expect([a.isUp(1099), a.isUp(1100)]).toEqual([false, true]);
    // Back from its first ejection, one more failure takes it out for twice as long, then maxMs.
    p.failed(a, 2000);
    expect([a.isUp(2199), a.isUp(2200)]).toEqual([false, true]);
    p.failed(a, 3000);
    expect([a.isUp(3299), a.isUp(3300)]).toEqual([false, true]);
    expect(ejected).toEqual(['a:1', 'a:1', 'a:1']);
    expect(p.states(3000)).toEqual([
      { target: 'a:1', state: 'ejected', outstanding: 0, retryInMs: 300 },
      { target: 'b:1', state: 'up', outstanding: 0 },
    ]);
    p.succeeded(a);
    p.failed(a, 4000);
    expect(a.isUp(4000)).toBe(true);
    p.failed(a, 4000);
    expect([a.isUp(4099), a.isUp(4100)]).toEqual([false, true]);
  });

  it('skips an ejected target, and with every target out tries the one out longest (panic mode)', () => {
    const p = pool({ targets: [{ url: 'http://a:1' }, { url: 'http://b:1' }, { url: 'http://c:1' }], eject: { failures: 1, baseMs: 1000, maxMs: 1000 } });
    const [a, b, c] = p.targets;
    p.failed(b!, 10);
    for (let i = 0; i < 4; i += 1) expect(p.pick(20)).not.toBe(b);
    p.failed(c!, 20);
    p.failed(a!, 30);
    expect(p.pick(40)).toBe(b);
    expect(p.pick(40, [b!])).toBe(c);
  });
});
