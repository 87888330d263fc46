import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, InvalidCursorError } from '../../../src/store/index.js';

describe('ledger cursor', () => {
  it('round-trips a position, opaque to the client', () => {
    const cursor = encodeCursor({ at: '2025-05-01T00:00:01.000Z', id: 'req-7' });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual({ at: '2025-05-01T00:00:01.000Z', id: 'req-7' });
  });

  it.each([
    ['not base64 JSON', 'bm90LWEtY3Vyc29y'],
    ['a wrong shape', Buffer.from('{"at":"x"}').toString('base64url')],
    ['a bad instant', Buffer.from('["yesterday","r"]').toString('base64url')],
    ['garbage', '%%%'],
    // Each would otherwise decode to a position a client made up: a third element, an epoch
    // number read as an instant, a number as the row id.
    ['three elements', Buffer.from('["2025-05-01T00:00:01.000Z","r","x"]').toString('base64url')],
    ['a number for the instant', Buffer.from('[1746057601000,"r"]').toString('base64url')],
    ['a number for the id', Buffer.from('["2025-05-01T00:00:01.000Z",7]').toString('base64url')],
    ['an object with the right length', Buffer.from('{"0":"2025-05-01T00:00:01.000Z","1":"r","length":2}').toString('base64url')],
  ])('refuses %s with InvalidCursorError', (_, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(InvalidCursorError);
  });
});
