import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../../src/auth/index.js';

/** Only what clientAddress reads: the socket's peer and the headers (Node's lower-cased form). */
function request(remoteAddress: string | undefined, forwarded?: string | string[]): IncomingMessage {
  return { socket: { remoteAddress }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } } as unknown as IncomingMessage;
}

// The auth-failure throttle counts per this address: read from a header nobody vouches for, any
// client could spread its guesses over made-up addresses (or lock another client out).
describe('clientAddress', () => {
  it('is the socket peer without trustProxy, whatever X-Forwarded-For says', () => {
    expect(clientAddress(request('10.0.0.9', '203.0.113.7'), false)).toBe('10.0.0.9');
  });

  it('is the first, client-most X-Forwarded-For entry with trustProxy, trimmed', () => {
    expect(clientAddress(request('10.0.0.9', ' 203.0.113.7 , 10.0.0.1, 10.0.0.2'), true)).toBe('203.0.113.7');
  });

  it('falls back to the peer when X-Forwarded-For is absent or its first entry empty', () => {
    expect(clientAddress(request('10.0.0.9'), true)).toBe('10.0.0.9');
    expect(clientAddress(request('10.0.0.9', ' , 203.0.113.7'), true)).toBe('10.0.0.9');
    expect(clientAddress(request('10.0.0.9', ['203.0.113.7']), true)).toBe('10.0.0.9');
  });

  it('cuts a forged entry at 64 characters', () => {
    const long = 'a'.repeat(100);
    expect(clientAddress(request('10.0.0.9', long), true)).toBe('a'.repeat(64));
  });

  it('says unknown for a socket without a peer address', () => {
    expect(clientAddress(request(undefined), false)).toBe('unknown');
    expect(clientAddress(request(undefined), true)).toBe('unknown');
  });
});
