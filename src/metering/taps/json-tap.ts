import { NOTHING_SEEN, type ResponseTap, type TapResult } from './tap.js';
import { skipJsonSpace } from './json-scan.js';
import { readUsage, scanReply } from './usage.js';

/** Keeps references to a non-stream reply's chunks (up to a bound) and reads its usage and model at the end. */
export class JsonTap implements ResponseTap {
  readonly rewrites = false;
  private chunks: Buffer[] | null = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  write(chunk: Buffer): Buffer {
    if (this.chunks !== null) {
      this.bytes += chunk.length;
      if (this.bytes > this.maxBytes) this.chunks = null;
      else this.chunks.push(chunk);
    }
    return chunk;
  }

  end(): TapResult {
    const chunks = this.chunks;
    this.chunks = null;
    if (chunks === null || chunks.length === 0) return NOTHING_SEEN;
    // Most replies arrive in one chunk: decode it in place rather than concat a copy first.
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.bytes);
    // Only a JSON object is a reply (an array or a bare value quoting "usage" is not).
    if (body[skipJsonSpace(body, 0)] !== 0x7b) return NOTHING_SEEN;
    const reply = scanReply(body);
    const usage = readUsage(reply.usage);
    return { ...NOTHING_SEEN, usage: usage === 'invalid' ? null : usage, invalidUsage: usage === 'invalid', model: reply.model };
  }
}
