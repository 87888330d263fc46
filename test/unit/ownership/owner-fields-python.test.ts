import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readJobModelId, readModelNameFields } from '../../../src/ownership/index.js';
import { body, canon, expectStreamedAgrees, gatewayReading, KEYS, KNOWN, tryRead, units, type Canon } from './guarded-bodies.js';

// The gateway's reading of a guarded body's owner fields against the upstream's own: Python's
// json.loads on the raw bytes (SPEC 13.1). Bodies are generated with what makes Python read
// differently from JSON.parse (duplicates, escaped keys, NaN/Infinity, BOMs, UTF-16/32, surrogate
// escapes, trailing text, non-JSON whitespace, nesting), all judged by one python3 run.
// Whenever the gateway accepts a body, Python must read exactly the same owner fields; and a
// plain body Python reads unambiguously must not be refused.

/** FUZZ_SCALE=20 multiplies the number of bodies, for a longer hunt by hand. */
const BODIES = Math.round(3000 * Number(process.env['FUZZ_SCALE'] ?? '1'));
const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);

// --- Python's reading ----------------------------------------------------------------------

const PYTHON = `
import json, struct, sys, codecs
KEYS = ${JSON.stringify(KEYS)}
def units(s): return s.encode('utf-16-le', 'surrogatepass').hex()
def canon(v):
    if v is None: return ['null']
    if v is True or v is False: return ['bool', v]
    if isinstance(v, int): return ['int', str(v)]
    if isinstance(v, float): return ['nan'] if v != v else ['float', struct.pack('>d', v).hex()]
    if isinstance(v, str): return ['str', units(v)]
    if isinstance(v, list): return ['list', [canon(x) for x in v]]
    return ['dict', [[units(k), canon(x)] for k, x in v.items()]]
def plain(b, v, pairs):
    # A body no reader could take two ways: strict UTF-8 without BOM, one object, each owner key once (depth: see nestingOf).
    try: text = b.decode('utf-8')
    except UnicodeDecodeError: return False
    if text.startswith('\\ufeff') or json.detect_encoding(b) != 'utf-8': return False
    keys = [k for k, _ in pairs]
    if any(keys.count(k) > 1 for k in KEYS): return False
    if any(isinstance(v.get(k), str) and any(0xd800 <= ord(c) <= 0xdfff for c in v[k]) for k in KEYS): return False
    return True
out = []
for line in sys.stdin:
    b = bytes.fromhex(line.strip())
    top = []
    def hook(pairs):
        top[:] = [pairs]
        return dict(pairs)
    try:
        v = json.loads(b, object_pairs_hook=hook)
    except Exception:
        out.append(None)
        continue
    sys.setrecursionlimit(20000)
    if not isinstance(v, dict): out.append({'object': False})
    else: out.append({'object': True, 'plain': plain(b, v, top[0]), 'fields': {k: canon(v[k]) for k in KEYS if k in v}})
    sys.setrecursionlimit(1000)
sys.setrecursionlimit(20000)
print(json.dumps(out))
`;

/** How deep the text nests as written (a container a later duplicate key replaced was still parsed); ASCII-safe on UTF-8 bytes. */
function nestingOf(raw: Buffer): number {
  let deepest = 0;
  let level = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === 0x22) {
      for (i++; i < raw.length && raw[i] !== 0x22; i++) if (raw[i] === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++level);
    else if (c === 0x5d || c === 0x7d) level--;
  }
  return deepest;
}

type PythonReading = null | { object: false } | { object: true; plain: boolean; fields: Record<string, Canon> };

function readWithPython(bodies: readonly Buffer[]): PythonReading[] {
  // One line per body, each ended: an empty body last would otherwise be no line at all to Python.
  const run = spawnSync('python3', ['-c', PYTHON], { input: bodies.map((b) => `${b.toString('hex')}\n`).join(''), maxBuffer: 256 * 1024 ** 2 });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr.toString()}`);
  const readings = JSON.parse(run.stdout.toString()) as PythonReading[];
  if (readings.length !== bodies.length) throw new Error(`python3 read ${readings.length} bodies of ${bodies.length}`);
  return readings;
}


// --- The property ---------------------------------------------------------------------------

describe('guarded bodies are read as Python json.loads reads them, or refused', () => {
  it(`agrees with python3 on every body it accepts (${BODIES} generated bodies, seed ${SEED})`, () => {
    const bodies = [...KNOWN, ...fc.sample(body, { numRuns: BODIES, seed: SEED })];
    const python = readWithPython(bodies);
    let accepted = 0;
    bodies.forEach((raw, i) => {
      const py = python[i]!;
      const gw = gatewayReading(raw);
      // The body itself is printed only on a failure (see below): hex of every body costs seconds.
      const where = `body #${i} (seed ${SEED})`;
      try {
        // The streamed reader (job bodies) reaches the whole-body reader's verdict and fields, however the body is cut.
        expectStreamedAgrees(raw, gw, i, where);
        if (gw.accepted) {
          accepted++;
          // Accepted: Python read one object, and exactly these owner fields.
          expect(py, where).not.toBeNull();
          expect(py && py.object, where).toBe(true);
          expect((py as { fields: Record<string, Canon> }).fields, where).toEqual(gw.fields);
          const modelId = tryRead(() => readJobModelId(raw));
          if (modelId !== undefined) expect((py as { fields: Record<string, Canon> }).fields['model_id'], where).toEqual(['str', units(modelId)]);
          const names = tryRead(() => readModelNameFields(raw));
          if (names !== undefined) {
            for (const key of ['entity', 'project', 'name'] as const) {
              const value = names[key];
              expect((py as { fields: Record<string, Canon> }).fields[key], where).toEqual(value === undefined ? undefined : canon(value));
            }
          }
        } else if (py !== null && py.object && py.plain && nestingOf(raw) < 400) {
          // Refused though Python reads it plainly, each owner key once, not deep: the gateway must not be stricter here.
          expect.fail(`refused a plain body Python reads (${gw.refusal.message}): ${where}`);
        }
      } catch (err) {
        throw new Error(`${(err as Error).message}\nthe body, hex: ${raw.toString('hex')}`);
      }
    });
    // Not vacuous: a good share of the bodies are accepted (and so compared field by field).
    expect(accepted).toBeGreaterThan(bodies.length / 10);
    expect(gatewayReading(KNOWN[0]!).accepted).toBe(false);
    expect(gatewayReading(KNOWN[1]!).accepted).toBe(true);
  }, 60_000);
});
