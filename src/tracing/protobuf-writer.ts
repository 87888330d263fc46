/**
 * A protobuf writer for the few wire types an OTLP span needs, into one buffer that grows and
 * is reused from batch to batch. It writes what the SDK's ProtobufWriter writes (minimal varints,
 * a 1-byte length reserved and widened only for messages of 128 bytes or more), in one pass where
 * the SDK sizes every message first; short ASCII strings are copied a unit at a time, others
 * go through Node's native UTF-8 writer.
 */
/** Each hex digit's value by its char code (16 or more: not a hex digit). */
const HEX_VALUE = (() => {
  const values = new Uint8Array(128).fill(0x10);
  for (let digit = 0; digit < 16; digit++) {
    values['0123456789abcdef'.charCodeAt(digit)] = digit;
    values['0123456789ABCDEF'.charCodeAt(digit)] = digit;
  }
  return values;
})();

/** How many bytes `value` takes as a varint. */
export function varintSize(value: number): number {
  let size = 1;
  for (let rest = value; rest >= 0x80; rest = Math.floor(rest / 0x80)) size++;
  return size;
}

/**
 * Writes `bytes` bytes read from the hex digits (ASCII bytes) in `source` [from, to) into `target`
 * at `at`; false when they are not that much hex.
 */
export function hexInto(target: Uint8Array, at: number, source: Uint8Array, from: number, to: number, bytes: number): boolean {
  let valid = to - from === bytes * 2;
  for (let i = 0; i < bytes; i++) {
    const high = HEX_VALUE[source[from + 2 * i]!] ?? 0x10;
    const low = HEX_VALUE[source[from + 2 * i + 1]!] ?? 0x10;
    if ((high | low) > 0xf) valid = false;
    target[at + i] = (high << 4) | low;
  }
  return valid;
}

export class ProtobufWriter {
  private buffer: Buffer;
  /** Where the next byte goes. */
  pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  /** Everything written since `from`, copied out (the writer is about to be reused). */
  copyFrom(from: number): Buffer {
    return Buffer.from(this.buffer.subarray(from, this.pos));
  }

  /** Bytes [from, to) as they are now: a view, valid until the next write. */
  view(from: number, to: number): Buffer {
    return this.buffer.subarray(from, to);
  }

  /** Forgets what was written, keeping the buffer. */
  reset(): void {
    this.pos = 0;
  }

  /** Room for `bytes` more bytes. */
  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.pos + bytes));
    this.buffer.copy(grown, 0, 0, this.pos);
    this.buffer = grown;
  }

  /** Bytes [from, to) of `source` (a string already encoded): short runs a byte at a time, cheaper than a view and a native copy. */
  copy(source: Uint8Array, from: number, to: number): void {
    const count = to - from;
    this.ensure(count);
    const buffer = this.buffer;
    if (count > 64) buffer.set(source.subarray(from, to), this.pos);
    else for (let i = 0; i < count; i++) buffer[this.pos + i] = source[from + i]!;
    this.pos += count;
  }

  /** A single byte: a tag whose field number and wire type fit in one (fields 1–15). */
  byte(value: number): void {
    this.ensure(1);
    this.buffer[this.pos++] = value;
  }

  /** Bytes already encoded (a cached key, say). */
  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buffer.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** A non-negative integer below 2^53 as a varint. */
  varint(value: number): void {
    this.ensure(10);
    const buffer = this.buffer;
    let pos = this.pos;
    while (value >= 0x80) {
      buffer[pos++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    buffer[pos++] = value;
    this.pos = pos;
  }

  /** An int64 as protobuf writes it: negatives as their 64-bit two's complement, ten bytes. */
  int64(value: number): void {
    if (value >= 0 && value <= Number.MAX_SAFE_INTEGER) return this.varint(value);
    let bits = BigInt.asUintN(64, BigInt(value));
    this.ensure(10);
    while (bits >= 0x80n) {
      this.buffer[this.pos++] = Number(bits & 0x7fn) | 0x80;
      bits >>= 7n;
    }
    this.buffer[this.pos++] = Number(bits);
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.buffer.writeUInt32LE(value >>> 0, this.pos);
    this.pos += 4;
  }

  /** A fixed64 from its two 32-bit halves. */
  fixed64(low: number, high: number): void {
    this.ensure(8);
    this.buffer.writeUInt32LE(low, this.pos);
    this.buffer.writeUInt32LE(high, this.pos + 4);
    this.pos += 8;
  }

  double(value: number): void {
    this.ensure(8);
    this.buffer.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /** A length-prefixed UTF-8 string (lone surrogates become U+FFFD, as with TextEncoder). */
  string(value: string): void {
    const length = value.length;
    // Short ASCII (attribute keys, names, ids, models) is copied a unit at a time: cheaper than a native call.
    if (length < 0x80) {
      this.ensure(1 + length * 3);
      const buffer = this.buffer;
      const start = this.pos + 1;
      let i = 0;
      for (; i < length; i++) {
        const unit = value.charCodeAt(i);
        if (unit > 0x7f) break;
        buffer[start + i] = unit;
      }
      if (i === length) {
        buffer[this.pos] = length;
        this.pos = start + length;
        return;
      }
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    this.varint(bytes);
    this.ensure(bytes);
    this.pos += this.buffer.write(value, this.pos, bytes, 'utf8');
  }

  /** `count` bytes of `source` from `from`, length-prefixed (an id already turned into bytes): copied a byte at a time, cheaper than a native call for so few. */
  lengthPrefixed(source: Uint8Array, from: number, count: number): void {
    this.ensure(1 + count);
    const buffer = this.buffer;
    let pos = this.pos;
    buffer[pos++] = count;
    for (let i = 0; i < count; i++) buffer[pos++] = source[from + i]!;
    this.pos = pos;
  }

  /** Starts a length-delimited message (after its tag): returns where its length goes. */
  begin(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Ends the message `begin` started: writes its length there, moving the message up when the length takes more than a byte. */
  end(at: number): void {
    const length = this.pos - at - 1;
    if (length < 0x80) {
      this.buffer[at] = length;
      return;
    }
    const size = varintSize(length);
    this.ensure(size - 1);
    this.buffer.copyWithin(at + size, at + 1, this.pos);
    this.pos += size - 1;
    const end = this.pos;
    this.pos = at;
    this.varint(length);
    this.pos = end;
  }
}
