import { randomFillSync } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

/** Random bytes drawn from the OS at a time (a call costs a few µs whatever its size). */
const RANDOM_BYTES = 8192;
/** Random bytes turned into hex at a time: 64 span ids (a traced request takes a trace id and two span ids, 4 of them). */
const HEX_BYTES = 512;
/** Ids are made of 8-byte groups: a span id is one, a trace id two. */
const GROUP_BYTES = 8;

/**
 * Random bytes for trace and span ids, from the OS's source 8 KB at a time: the ids the request
 * thread sends upstream (PooledIdGenerator) and the steps' span ids the export thread writes
 * straight into the spans (otlp-spans.ts). An all-zero id is invalid (W3C Trace Context): no
 * 8-byte group is left all zero (its last byte is set to 1, as the SDK does to a whole id), so
 * no id taken in whole groups is.
 */
export class RandomIdBytes {
  readonly bytes = Buffer.alloc(RANDOM_BYTES);
  /** The next byte not yet taken (all of them are taken when the pool starts). */
  private at = RANDOM_BYTES;

  /** `fill`: where the random bytes come from (the OS's, unless a test gives its own). */
  constructor(private readonly fill: (bytes: Uint8Array) => void = randomFillSync) {}

  /** Where the next `count` bytes (whole 8-byte groups, at most 8 KB) lie in `bytes`: theirs until the pool is drawn again. */
  take(count: number): number {
    if (this.at + count > RANDOM_BYTES) this.draw();
    const start = this.at;
    this.at = start + count;
    return start;
  }

  private draw(): void {
    const { bytes } = this;
    this.fill(bytes);
    for (let group = 0; group < RANDOM_BYTES; group += GROUP_BYTES) {
      let zero = true;
      for (let i = group; i < group + GROUP_BYTES && zero; i++) zero = bytes[i] === 0;
      if (zero) bytes[group + GROUP_BYTES - 1] = 1;
    }
    this.at = 0;
  }
}

/**
 * Trace and span ids cut from a pool of random hex, for the SDK's IdGenerator interface. The
 * SDK's RandomIdGenerator makes each id with a native call (Buffer's hex) and Math.random: a
 * traced request's three ids cost ~0.6 µs of its ~8 on the request thread in a loop
 * (bench/comparisons/traced-request-cpu.ts), ~0.1 µs here. Here the random bytes
 * (RandomIdBytes) are turned into hex 512 bytes at a time, and an id is a slice of that hex
 * string. A slice keeps its string (1 KB) alive while it lives, which bounds the hex's size: a
 * long request's ids hold no more than that.
 */
export class PooledIdGenerator implements IdGenerator {
  private readonly random: RandomIdBytes;
  private hex = '';
  /** The next unused digit of `hex`. */
  private at = 0;

  /** `fill`: where the random bytes come from (the OS's, unless a test gives its own). */
  constructor(fill?: (bytes: Uint8Array) => void) {
    this.random = new RandomIdBytes(fill);
  }

  generateTraceId(): string {
    return this.take(2 * GROUP_BYTES);
  }

  generateSpanId(): string {
    return this.take(GROUP_BYTES);
  }

  private take(bytes: number): string {
    const digits = 2 * bytes;
    if (this.at + digits > this.hex.length) this.nextHex();
    const start = this.at;
    this.at = start + digits;
    return this.hex.slice(start, this.at);
  }

  private nextHex(): void {
    const start = this.random.take(HEX_BYTES);
    this.hex = this.random.bytes.toString('hex', start, start + HEX_BYTES);
    this.at = 0;
  }
}
