import { expect } from 'vitest';
import { digest } from './keys.js';

interface Rotatable {
  rotate(id: string, overlapSeconds: number): Promise<{ id: string; key: string; source: string }>;
}

/**
 * SPEC 12.1 and 16, for API keys and admin keys alike: a rotation with a 60 s overlap keeps the
 * old secret working until now + 60 s, then only the new one; one without an overlap stops the
 * old secret at once. `idOf` is what the instance's memory authenticates a digest as at `now`.
 */
export async function expectRotationOverlap(admin: Rotatable, created: { id: string; key: string }, idOf: (digest: string, now: number) => string | undefined): Promise<void> {
  const before = Date.now();
  const rotated = await admin.rotate(created.id, 60);
  const after = Date.now();
  expect(rotated).toMatchObject({ id: created.id, source: 'api' });
  expect(rotated.key).not.toBe(created.key);
  expect(idOf(digest(rotated.key), after)).toBe(created.id);
  // The old secret's end lies in [before + 60 s, after + 60 s]: it works just before the first, not at the second.
  expect(idOf(digest(created.key), before + 60_000 - 1)).toBe(created.id);
  expect(idOf(digest(created.key), after + 60_000)).toBeUndefined();

  const again = await admin.rotate(created.id, 0);
  expect(idOf(digest(rotated.key), Date.now())).toBeUndefined();
  expect(idOf(digest(again.key), Date.now())).toBe(created.id);
}
