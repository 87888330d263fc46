import { describe, expect, it } from 'vitest';
import { SseEventBoundaries } from '../../../src/metering/index.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * The SSE grammar read the plain way, over the whole stream at once: lines end with CRLF, LF or
 * a lone CR; an empty line ends an event, just after its terminator. A CR that ends the stream is
 * left pending (an LF may follow it and belong to it), as the incremental finder must too.
 */
function boundariesOf(stream: Buffer): number[] {
  const out: number[] = [];
  let lineStart = 0;
  for (let p = 0; p < stream.length; p++) {
    const b = stream[p];
    if (b !== LF && b !== CR) continue;
    if (b === CR && p + 1 === stream.length) break;
    const end = b === CR && stream[p + 1] === LF ? p + 2 : p + 1;
    if (p === lineStart) out.push(end);
    lineStart = end;
    p = end - 1;
  }
  return out;
}

/** What SseEventBoundaries finds when the stream arrives in these chunks, as offsets in the whole stream. */
function foundIn(chunks: Buffer[]): number[] {
  const finder = new SseEventBoundaries();
  const found: number[] = [];
  const out: number[] = [];
  let offset = 0;
  for (const chunk of chunks) {
    finder.find(chunk, out);
    for (const at of out) found.push(offset + at);
    offset += chunk.length;
  }
  return found;
}

/** A small deterministic PRNG (mulberry32): the same streams and cuts on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('SseEventBoundaries', () => {
  it.each([
    ['LF events', 'data: a\n\ndata: b\n\n', [9, 18]],
    ['CRLF events', 'data: a\r\n\r\ndata: b\r\n\r\n', [11, 22]],
    ['lone CR events (the last CR pending)', 'data: a\r\rdata: b\r\r', [9]],
    ['a blank line first', '\n\ndata: a\n\n', [1, 2, 11]],
    ['a CR then LF split by nothing', 'a\r\n\r\nb', [5]],
  ])('finds the ends of %s in one chunk', (_name, text, ends) => {
    expect(foundIn([Buffer.from(text)])).toEqual(ends);
    expect(boundariesOf(Buffer.from(text))).toEqual(ends);
  });

  it('finds the same ends as the plain reading, however the stream is cut (empty chunks included)', () => {
    const next = random(20261126);
    const alphabet = ['a', 'a', 'a', '\r', '\n'];
    for (let round = 0; round < 2000; round++) {
      const length = Math.floor(next() * 24);
      const stream = Buffer.from(Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
      const chunks: Buffer[] = [];
      for (let at = 0; at < stream.length || (chunks.length === 0 && next() < 0.5); ) {
        const size = Math.floor(next() * 5);
        chunks.push(stream.subarray(at, at + size));
        at += size;
      }
      expect([JSON.stringify(stream.toString()), chunks.map((c) => c.length), foundIn(chunks)]).toEqual([
        JSON.stringify(stream.toString()),
        chunks.map((c) => c.length),
        boundariesOf(stream),
      ]);
    }
  });
});
