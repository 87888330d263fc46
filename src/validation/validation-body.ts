import { renderableInput, type ValidationDetail } from './detail.js';
import { renderFastApiJson } from './python-json-encoder.js';

/**
 * The exact JSON text FastAPI sends with a 422: `{"detail":[...]}` as Starlette's JSONResponse
 * writes it (compact separators, non-ASCII kept, keys in pydantic's order).
 */
export function renderValidationBody(detail: readonly ValidationDetail[]): string {
  const items = detail.map((item) => {
    const head = `{"type":${JSON.stringify(item.type)},"loc":${renderFastApiJson(item.loc)},"msg":${JSON.stringify(item.msg)}`;
    const input = `,"input":${renderFastApiJson(renderableInput(item))}`;
    const ctx = item.ctx === undefined ? '' : `,"ctx":${renderFastApiJson(item.ctx)}`;
    return `${head}${input}${ctx}}`;
  });
  return `{"detail":[${items.join(',')}]}`;
}
