import type { Usage } from './usage.js';

/** What a tap saw once the upstream response ended. */
export interface TapResult {
  /** Bytes still held back that the client must still get (null: nothing). */
  tail: Buffer | null;
  usage: Usage | null;
  /** The upstream reported usage that cannot be right (negative, fractional, over 10^9): ignored. */
  invalidUsage: boolean;
  model: string | null;
  /** Stream chunks that carried generated text, and its bytes: what an unfinished stream is charged by. */
  contentChunks: number;
  completionBytes: number;
}

/** Sits on the upstream response body while the proxy relays it chunk by chunk. */
export interface ResponseTap {
  /** May this tap change the bytes (drop the forced usage event)? If not, Content-Length stays valid. */
  readonly rewrites: boolean;
  /** Returns the bytes to send to the client for this upstream chunk (the same Buffer when unchanged — no copy on the common path). */
  write(chunk: Buffer): Buffer;
  /** Upstream ended; returns any bytes still held back (usually empty) and the usage seen, or null. */
  end(): TapResult;
}

export const NOTHING_SEEN: TapResult = Object.freeze({ tail: null, usage: null, invalidUsage: false, model: null, contentChunks: 0, completionBytes: 0 });
