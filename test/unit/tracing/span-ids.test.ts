import { describe, expect, it } from 'vitest';
import { PooledIdGenerator } from '../../../src/tracing/span-ids.js';

/** A random source that gives 0, 1, 2, … (mod 256) across its calls, and counts them. */
function countingSource(): { fill: (bytes: Uint8Array) => void; calls: () => number } {
  let next = 0;
  let calls = 0;
  return {
    fill: (bytes) => {
      calls += 1;
      for (let i = 0; i < bytes.length; i++) bytes[i] = next++ & 0xff;
    },
    calls: () => calls,
  };
}

describe('PooledIdGenerator', () => {
  it('cuts span ids (16 hex digits) and trace ids (32) from the random bytes in order', () => {
    const source = countingSource();
    const ids = new PooledIdGenerator(source.fill);
    expect(ids.generateSpanId()).toBe('0001020304050607');
    expect(ids.generateTraceId()).toBe('08090a0b0c0d0e0f1011121314151617');
    expect(ids.generateSpanId()).toBe('18191a1b1c1d1e1f');
  });

  it('draws 8 KB from the random source at a time, and goes on across the hex it turns them into 512 bytes at a time', () => {
    const source = countingSource();
    const ids = new PooledIdGenerator(source.fill);
    const spanIds = Array.from({ length: 1024 }, () => ids.generateSpanId());
    expect(source.calls()).toBe(1);
    // Span id 64 is the first of the second 512 bytes: bytes 512..519, counting 0..255 over again.
    expect(spanIds[63]).toBe('f8f9fafbfcfdfeff');
    expect(spanIds[64]).toBe('0001020304050607');
    expect(spanIds[1023]).toBe('f8f9fafbfcfdfeff');
    expect(ids.generateSpanId()).toBe('0001020304050607');
    expect(source.calls()).toBe(2);
  });

  it('never gives an all-zero id (invalid in W3C Trace Context): a zero 8-byte group ends in 1', () => {
    const ids = new PooledIdGenerator((bytes) => bytes.fill(0));
    expect(ids.generateSpanId()).toBe('0000000000000001');
    expect(ids.generateTraceId()).toBe('00000000000000010000000000000001');
  });

  it('looks at each 8-byte group alone: a zero group before one that is not is mended, and that one is left as it is', () => {
    const ids = new PooledIdGenerator((bytes) => {
      bytes.fill(0);
      bytes[8] = 0x80;
    });
    expect(ids.generateSpanId()).toBe('0000000000000001');
    expect(ids.generateSpanId()).toBe('8000000000000000');
  });

  it('gives distinct lowercase-hex ids from the OS random source', () => {
    const ids = new PooledIdGenerator();
    const spanIds = new Set(Array.from({ length: 5000 }, () => ids.generateSpanId()));
    const traceIds = new Set(Array.from({ length: 5000 }, () => ids.generateTraceId()));
    expect(spanIds.size).toBe(5000);
    expect(traceIds.size).toBe(5000);
    for (const id of spanIds) expect(id).toMatch(/^[0-9a-f]{16}$/);
    for (const id of traceIds) expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});
