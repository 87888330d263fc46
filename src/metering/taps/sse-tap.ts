import { contentBytes } from './content-count.js';
import { SseEventBoundaries } from './sse-boundaries.js';
import { eventData, mayCarryUsage } from './sse-event.js';
import { parseJsonOrUndefined, readModel, readUsage, type Usage } from './usage.js';
import type { ResponseTap, TapResult } from './tap.js';

const EMPTY = Buffer.alloc(0);

/** `chunk[from, to)` without copying; the chunk itself when that is all of it. */
const view = (chunk: Buffer, from: number, to: number): Buffer =>
  from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to);

const join = (pieces: Buffer[]): Buffer =>
  pieces.length === 0 ? EMPTY : pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);

/** An event with usage and no choices: the extra chunk `stream_options.include_usage` adds. */
const isUsageOnly = (chunk: Record<string, unknown>): boolean =>
  chunk.choices === undefined || (Array.isArray(chunk.choices) && chunk.choices.length === 0);

/**
 * Meters an SSE chat stream event by event. Without dropping, every chunk is returned as is
 * and only the bytes of an incomplete trailing event are referenced (for parsing). With
 * dropping, complete events are released at once and only an incomplete trailing event is
 * held back, so the usage-only event can be cut out whole.
 */
export class SseTap implements ResponseTap {
  get rewrites(): boolean {
    return this.drop;
  }
  private readonly boundaries = new SseEventBoundaries();
  private readonly ends: number[] = [];
  private readonly out: Buffer[] = [];
  /** Bytes of the current, incomplete event (views of earlier chunks, never copies). */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The current event outgrew maxEventBytes: relayed, not inspected (no usage event is that big). */
  private skipping = false;
  private usage: Usage | null = null;
  private invalidUsage = false;
  private contentChunks = 0;
  private completionBytes = 0;
  private model: string | null = null;
  private modelTried = false;

  constructor(
    private readonly drop: boolean,
    private readonly maxEventBytes: number,
  ) {}

  write(chunk: Buffer): Buffer {
    if (chunk.length === 0) return chunk;
    this.boundaries.find(chunk, this.ends);
    const out = this.out;
    out.length = 0;
    let start = 0;
    let runStart = 0;
    for (const end of this.ends) {
      const cut = this.completeEvent(chunk, start, end);
      if (this.drop) {
        if (cut) {
          if (start > runStart) out.push(chunk.subarray(runStart, start));
          runStart = end;
        } else if (this.held.length > 0) {
          out.push(...this.held);
        }
      }
      if (this.held.length > 0) {
        this.held.length = 0;
        this.heldBytes = 0;
      }
      start = end;
    }
    const released = this.holdTail(chunk, start);
    if (!this.drop) return chunk;
    if (start > runStart) out.push(view(chunk, runStart, start));
    if (released) out.push(...released);
    return join(out);
  }

  end(): TapResult {
    let tail: Buffer | null = null;
    if (this.held.length > 0 && !this.skipping) {
      // An event cut off by the end of the stream: metered like any other, relayed unless dropped.
      const last = join(this.held);
      const cut = this.inspect(last);
      if (this.drop && !cut) tail = last;
    }
    this.held = [];
    this.heldBytes = 0;
    const { usage, invalidUsage, model, contentChunks, completionBytes } = this;
    return { tail, usage, invalidUsage, model, contentChunks, completionBytes };
  }

  /** Inspects the event ending at `end`; true when it is to be cut from the client's stream. */
  private completeEvent(chunk: Buffer, start: number, end: number): boolean {
    if (this.skipping) {
      this.skipping = false;
      return false;
    }
    const last = chunk.subarray(start, end);
    return this.inspect(this.held.length === 0 ? last : Buffer.concat([...this.held, last]));
  }

  /**
   * Keeps the incomplete trailing event of `chunk`. Returns the held bytes when that event
   * grows past maxEventBytes (dropping mode relays them at once), else null.
   */
  private holdTail(chunk: Buffer, start: number): Buffer[] | null {
    if (start === chunk.length) return null;
    const tail = view(chunk, start, chunk.length);
    if (this.skipping) return [tail];
    this.held.push(tail);
    this.heldBytes += chunk.length - start;
    if (this.heldBytes <= this.maxEventBytes) return null;
    const released = this.held;
    this.held = [];
    this.heldBytes = 0;
    this.skipping = true;
    return released;
  }

  /** Reads usage (and the model) from one event, and counts its text; true when dropping and it is usage-only. */
  private inspect(event: Buffer): boolean {
    const text = contentBytes(event);
    if (text > 0) {
      this.contentChunks += 1;
      this.completionBytes += text;
    }
    const wantsModel = this.model === null && !this.modelTried;
    const withUsage = mayCarryUsage(event);
    if (!withUsage && !wantsModel) return false;
    const data = eventData(event);
    if (data === null) return false;
    const parsed = parseJsonOrUndefined(data);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
    const chunk = parsed as Record<string, unknown>;
    if (wantsModel) {
      this.modelTried = true;
      this.model = readModel(chunk);
    }
    const usage = withUsage ? readUsage(chunk.usage) : null;
    if (usage === 'invalid') this.invalidUsage = true;
    if (usage === null || usage === 'invalid') return false;
    this.usage = usage;
    this.model ??= readModel(chunk);
    return this.drop && isUsageOnly(chunk);
  }
}
