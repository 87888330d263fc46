import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { body, expectStreamedAgrees, gatewayReading, KNOWN } from './guarded-bodies.js';

/**
 * The streamed reader (TopLevelStream, through the job body's model_id watch) against the
 * whole-body reader, on the same generated bodies as the python3 property test but with a fixed
 * seed and no python3: whatever the cuts, the same verdict and the same owner fields. The python3
 * test holds the whole-body reader to Python; this one is the streamed reader's fast, repeatable
 * check (a change to it fails here in a second, not after a python3 run).
 */

const SEED = 20261126;
/** FUZZ_SCALE, as in owner-fields-python.test.ts: more bodies for a hunt by hand, fewer for a mutation run (each mutant reads them all). */
const BODIES = Math.round(2000 * Number(process.env['FUZZ_SCALE'] ?? '1'));

describe('the streamed owner-field reader reaches the whole-body reader’s verdict', () => {
  it(`on ${BODIES} generated bodies (seed ${SEED}), each cut whole, byte by byte and at random points`, () => {
    const bodies = [...KNOWN, ...fc.sample(body, { numRuns: BODIES, seed: SEED })];
    let accepted = 0;
    bodies.forEach((raw, i) => {
      const gw = gatewayReading(raw);
      if (gw.accepted) accepted++;
      expectStreamedAgrees(raw, gw, i, `body #${i}, hex ${raw.length > 200 ? `${raw.subarray(0, 200).toString('hex')}…` : raw.toString('hex')}`);
    });
    // Not vacuous: the generator gives both verdicts in good number.
    expect(accepted).toBeGreaterThan(bodies.length / 10);
    expect(bodies.length - accepted).toBeGreaterThan(bodies.length / 10);
  }, 60_000);
});
