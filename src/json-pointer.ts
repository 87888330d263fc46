/*
 * JSON Pointers (RFC 6901): where in a JSON answer a route finds the id it records or checks
 * (`/run_id`, `/data/0/id`). Parsed once, when the configuration is read; evaluated per answer.
 */

/** A pointer's reference tokens, unescaped (`/a~1b/~0c` is ["a/b", "~c"]); [] is the whole document. */
export type JsonPointer = readonly string[];

/** What is wrong with a pointer's text, if anything. */
export function jsonPointerProblem(text: string): string | undefined {
  if (text !== '' && !text.startsWith('/')) return `"${text}" is not a JSON pointer (RFC 6901): it must be empty or start with /, e.g. /run_id`;
  if (/~(?![01])/.test(text)) return `"${text}" is not a JSON pointer (RFC 6901): ~ must be followed by 0 or 1 (~0 is ~, ~1 is /)`;
  return undefined;
}

/** The tokens of a pointer jsonPointerProblem accepts. */
export function parseJsonPointer(text: string): JsonPointer {
  if (text === '') return [];
  return text
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** The value at the pointer in a parsed JSON document, or undefined where there is none. */
export function valueAt(document: unknown, pointer: JsonPointer): unknown {
  let node = document;
  for (const token of pointer) {
    if (Array.isArray(node)) {
      // RFC 6901: an array index is 0 or digits without a leading zero.
      if (!/^(?:0|[1-9][0-9]*)$/.test(token)) return undefined;
      node = node[Number(token)];
    } else if (node !== null && typeof node === 'object' && Object.hasOwn(node, token)) {
      node = (node as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return node;
}

/** The pointer's text again (for messages and logs). */
export const jsonPointerText = (pointer: JsonPointer): string => pointer.map((t) => `/${t.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
