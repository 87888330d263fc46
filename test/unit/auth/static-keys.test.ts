import { describe, expect, it } from 'vitest';
import { StaticKeyTable } from '../../../src/auth/index.js';
import { newKeySecret, sha256Hex } from '../../../src/key-secrets.js';

/** SPEC 5.1: keys are stored and compared as SHA-256 hex digests of the secret, never the secret. */
describe('static keys', () => {
  it('digests a secret as lowercase SHA-256 hex of its UTF-8 bytes', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('clé')).toBe('51cbcf30514d0802eb5c60a018f384ea3fb9b69307c554ee63ecb43177594de4');
  });

  it('finds the entry of a presented secret by its digest, and nothing for another secret', () => {
    const ci = { id: 'ci-bot', sha256: sha256Hex('tg-ci') };
    const eval_ = { id: 'eval', sha256: sha256Hex('tg-eval') };
    const table = new StaticKeyTable([ci, eval_]);
    expect(table.size).toBe(2);
    expect(table.find(sha256Hex('tg-ci'))).toBe(ci);
    expect(table.find(sha256Hex('tg-eval'))).toBe(eval_);
    expect(table.find(sha256Hex('tg-other'))).toBeUndefined();
    expect(new StaticKeyTable([]).size).toBe(0);
  });

  it('hands out secrets of tg- and 32 base64url characters (24 random bytes), a new one each time', () => {
    const a = newKeySecret();
    expect(a).toMatch(/^tg-[A-Za-z0-9_-]{32}$/);
    expect(newKeySecret()).not.toBe(a);
  });
});
