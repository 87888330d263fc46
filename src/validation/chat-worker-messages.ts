import type { ChatBodyCheck } from './check-now.js';
import type { ChatFacts } from './chat-facts.js';

/*
 * What crosses between the event loop and a chat worker. Never a parsed body (cloning a big
 * object would block the loop again): the request bytes go in, and only the facts, rewritten
 * bytes or the rendered 422 text come back.
 */

/** A body to check: the worker's own copy, transferred, or the caller's shared memory, only read. */
export interface ChatWorkerTask {
  readonly bytes: Uint8Array;
  readonly contentType: string | undefined;
}

/** A check as it crosses back: the main thread still holds the original bytes. */
export type PortableCheck =
  | { readonly ok: true; readonly facts: Omit<ChatFacts, 'forwardBytes'>; readonly forcedBytes: Uint8Array | undefined }
  | { readonly ok: false; readonly body: string; readonly errorCount: number };

export type ChatWorkerReply = { readonly check: PortableCheck } | { readonly failure: string };

/** The bytes of `buffer` in an ArrayBuffer of their own, which can be transferred without taking others' bytes along. */
export function ownedBytes(buffer: Uint8Array): Uint8Array {
  const owned = buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength && buffer.buffer instanceof ArrayBuffer;
  return owned ? buffer : new Uint8Array(buffer);
}

/** The check to post back, and what to transfer with it (rewritten bytes only). */
export function toPortable(check: ChatBodyCheck): [PortableCheck, ArrayBuffer[]] {
  if (!check.ok) return [check, []];
  const { forwardBytes, ...facts } = check.facts;
  if (!facts.usageForced) return [{ ok: true, facts, forcedBytes: undefined }, []];
  const forcedBytes = ownedBytes(forwardBytes);
  return [{ ok: true, facts, forcedBytes }, [forcedBytes.buffer as ArrayBuffer]];
}

/** The check as the caller sees it: unless usage was forced, it forwards its own `raw`. */
export function fromPortable(portable: PortableCheck, raw: Buffer): ChatBodyCheck {
  if (!portable.ok) return portable;
  const { facts, forcedBytes } = portable;
  const forwardBytes = forcedBytes === undefined ? raw : Buffer.from(forcedBytes.buffer, forcedBytes.byteOffset, forcedBytes.byteLength);
  return { ok: true, facts: { ...facts, forwardBytes } };
}
