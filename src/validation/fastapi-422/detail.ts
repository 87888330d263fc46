/** One item of FastAPI's 422 `detail` list. */
export interface ValidationDetail {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/**
 * `input` holds the plain JS value, which cannot say `1.0` or keep the order of integer-like
 * keys; the Python-faithful value it came from is kept beside the item for the renderer.
 */
const exactInputs = new WeakMap<ValidationDetail, unknown>();

/**
 * Builds a detail item whose `input` renders exactly as Python would from `exact`: a PyValue,
 * or JS data that renders the same (see python-exact-parse.ts).
 */
export function detailItem(
  type: string,
  loc: (string | number)[],
  msg: string,
  input: unknown,
  exact: unknown,
  ctx?: Record<string, unknown>,
): ValidationDetail {
  const item: ValidationDetail = ctx === undefined ? { type, loc, msg, input } : { type, loc, msg, input, ctx };
  exactInputs.set(item, exact);
  return item;
}

/** The value to render as `input`: the exact Python value when known, else the JS value. */
export function renderableInput(item: ValidationDetail): unknown {
  return exactInputs.has(item) ? exactInputs.get(item) : item.input;
}
