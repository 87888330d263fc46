/**
 * A JSON value as Python's `json.loads` holds it. JavaScript loses three things FastAPI's 422
 * echoes back: int vs float (`1.0` stays `1.0`), integers beyond 2^53, and dict key order
 * (JS objects move integer-like keys first). This model keeps all three.
 */
export type PyValue = null | boolean | string | PyInt | PyFloat | PyValue[] | PyDict;

/** A Python dict: insertion order kept; a repeated key keeps its first position and last value. */
export type PyDict = Map<string, PyValue>;

/** A Python int, as its canonical decimal text (`-0` is `0`). */
export class PyInt {
  constructor(readonly text: string) {}
}

/** A Python float (NaN and ±Infinity included: Python's json accepts those literals). */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** Sets an own property even for `__proto__`, as JSON.parse does. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

interface PendingContainer {
  readonly from: PyValue[] | PyDict;
  readonly into: unknown[] | Record<string, unknown>;
}

function shallowJs(value: PyValue, pending: PendingContainer[]): unknown {
  if (value instanceof PyInt) return Number(value.text);
  if (value instanceof PyFloat) return value.value;
  if (Array.isArray(value)) {
    const into: unknown[] = [];
    pending.push({ from: value, into });
    return into;
  }
  if (value instanceof Map) {
    const into: Record<string, unknown> = {};
    pending.push({ from: value, into });
    return into;
  }
  return value;
}

/**
 * The plain JavaScript value JSON.parse would have produced (numbers as doubles). Iterative:
 * bodies can nest deeper than the call stack.
 */
export function toJsValue(root: PyValue): unknown {
  const pending: PendingContainer[] = [];
  const result = shallowJs(root, pending);
  for (let job = pending.pop(); job !== undefined; job = pending.pop()) {
    if (Array.isArray(job.from)) {
      const into = job.into as unknown[];
      for (const item of job.from) into.push(shallowJs(item, pending));
    } else {
      const into = job.into as Record<string, unknown>;
      for (const [key, item] of job.from) setOwn(into, key, shallowJs(item, pending));
    }
  }
  return result;
}
