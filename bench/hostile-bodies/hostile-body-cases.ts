import { INLINE_BOUNDS } from '../../src/validation/index.js';

/**
 * Request bodies that used to hold up the event loop or answer huge 422s (security review),
 * and two ordinary ones for comparison. Shared by hostile-bodies.ts and the tests.
 */
export interface BodyCase {
  readonly name: string;
  readonly body: Buffer;
  readonly contentType: string | undefined;
}

const JSON_TYPE = 'application/json';

function numbersBody(count: number): Buffer {
  const digits = Array.from({ length: count }, (_, i) => i % 10).join(',');
  return Buffer.from(`{"model":"m","messages":[${digits}]}`);
}

function chatOfShortMessages(targetBytes: number): Buffer {
  const message = '{"role":"user","content":"hi there"}';
  const count = Math.floor((targetBytes - 40) / (message.length + 1));
  return Buffer.from(`{"model":"m","messages":[${Array(count).fill(message).join(',')}]}`);
}

function nested(depth: number): string {
  return `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

function textChat(bytes: number): Buffer {
  return Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'lorem ipsum '.repeat(bytes / 12) }] }));
}

/** The hostile bodies, largest cost first in the review's order. */
export function hostileBodies(): BodyCase[] {
  return [
    { name: '1,000,000 numbers as messages', body: numbersBody(1_000_000), contentType: JSON_TYPE },
    { name: '8 MB without model', body: Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(8 * 1024 * 1024) }] })), contentType: JSON_TYPE },
    { name: '9.9 MB valid (short messages)', body: chatOfShortMessages(9_900_000), contentType: JSON_TYPE },
    { name: '100,000 levels, valid chat', body: Buffer.from(`{"model":"m","messages":[],"x":${nested(100_000)}}`), contentType: JSON_TYPE },
    { name: '100,000 levels, bare array', body: Buffer.from(nested(100_000)), contentType: JSON_TYPE },
    { name: '1 MB invalid JSON (error at the end)', body: Buffer.from(`{"model":"m","messages":[${'1,'.repeat(500_000)}x]}`), contentType: JSON_TYPE },
  ];
}

/** Ordinary chat bodies: what every request looks like. */
export function ordinaryBodies(): BodyCase[] {
  return [
    { name: '2 KB chat', body: textChat(2 * 1024), contentType: JSON_TYPE },
    { name: '100 KB chat of text', body: textChat(100 * 1024), contentType: JSON_TYPE },
  ];
}

/** `{"model":"m","messages":[...],"x":[unit,unit,...]}` grown to just under the inline size bound. */
function filledToInlineBound(messages: string, unit: string, extra = ''): Buffer {
  const head = `{"model":"m","messages":[${messages}]${extra},"x":[`;
  const count = Math.floor((INLINE_BOUNDS.inlineMaxBytes - head.length - 2) / (unit.length + 1));
  return Buffer.from(`${head}${Array(count).fill(unit).join(',')}]}`);
}

/** The costliest bodies the event loop still takes (just inside every bound of INLINE_BOUNDS). */
export function inlineEdgeBodies(): BodyCase[] {
  const structures = INLINE_BOUNDS.parse.maxStructures - 16;
  const keys = Array.from({ length: structures }, (_, i) => `"k${i}":1`).join(',');
  const deep = INLINE_BOUNDS.parse.maxDepth - 4;
  return [
    { name: 'edge: numbers', body: filledToInlineBound('', '1'), contentType: JSON_TYPE },
    { name: 'edge: short strings', body: filledToInlineBound('', '"a"'), contentType: JSON_TYPE },
    { name: 'edge: floats', body: filledToInlineBound('', '1.5e300'), contentType: JSON_TYPE },
    { name: `edge: ${structures} keys in one object`, body: filledToInlineBound('', '1', `,"o":{${keys}}`), contentType: JSON_TYPE },
    { name: `edge: ${structures} empty objects`, body: filledToInlineBound(Array(structures).fill('{}').join(','), '1'), contentType: JSON_TYPE },
    { name: `edge: ${deep} levels deep`, body: filledToInlineBound('', '1', `,"d":${'['.repeat(deep)}1${']'.repeat(deep)}`), contentType: JSON_TYPE },
  ];
}
