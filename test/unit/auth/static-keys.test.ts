import { describe, expect, it } from 'vitest';
import { sha256Hex, StaticKeyTable } from '../../../src/auth/static-keys.js';

describe('static key digests', () => {
  it('hashes a presented key to its SHA-256 hex digest (FIPS 180-2 vectors, and UTF-8 text)', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('é')).toBe('4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
  });

  it('finds an entry by the digest of its secret, and nothing for another digest', () => {
    const entry = { id: 'bot', sha256: sha256Hex('tg-secret') };
    const table = new StaticKeyTable([entry, { id: 'other', sha256: sha256Hex('tg-other') }]);
    expect(table.size).toBe(2);
    expect(table.find(sha256Hex('tg-secret'))).toBe(entry);
    expect(table.find(sha256Hex('tg-secre'))).toBeUndefined();
  });
});
