import { ECHO_BUDGET_BYTES, ECHO_FLOOR_BYTES } from './bounds.js';
import { renderableInput, type ValidationDetail } from './detail.js';
import { renderFastApiJson, renderFastApiJsonWithin } from '../../python-json/index.js';

/**
 * The exact JSON text FastAPI sends with a 422: `{"detail":[...]}` as Starlette's JSONResponse
 * writes it (compact separators, non-ASCII kept, keys in pydantic's order). Echoed inputs
 * share ECHO_BUDGET_BYTES (each item may still take ECHO_FLOOR_BYTES); an input that does not
 * fit what is left is cut, as renderFastApiJsonWithin describes. Below that the text is
 * FastAPI's byte for byte.
 */
export function renderValidationBody(detail: readonly ValidationDetail[]): string {
  let echoLeft = ECHO_BUDGET_BYTES;
  const items = detail.map((item) => {
    const head = `{"type":${JSON.stringify(item.type)},"loc":${renderFastApiJson(item.loc)},"msg":${JSON.stringify(item.msg)}`;
    const input = renderFastApiJsonWithin(renderableInput(item), Math.max(echoLeft, ECHO_FLOOR_BYTES));
    echoLeft -= input.bytes;
    const ctx = item.ctx === undefined ? '' : `,"ctx":${renderFastApiJson(item.ctx)}`;
    return `${head},"input":${input.text}${ctx}}`;
  });
  return `{"detail":[${items.join(',')}]}`;
}
