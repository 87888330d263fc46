import { errors, type GatewayError } from '../errors.js';

/**
 * Bytes of request bodies the gateway holds in memory at once (chat bodies are read whole for
 * validation). Past `max`, new bodies are refused with 503 `overloaded` instead of the process
 * growing until the kernel or the heap limit kills it — and every request with it.
 */
export class BufferBudget {
  private held = 0;

  /** `max` may change (a config reload); bodies already held stay held. */
  constructor(public max: number) {}

  /** Bytes held right now (the `tollgate_buffered_body_bytes` gauge). */
  get used(): number {
    return this.held;
  }

  /** Takes `bytes` or throws 503 overloaded; every successful take is given back once. */
  take(bytes: number): void {
    if (this.held + bytes > this.max) throw overloaded();
    this.held += bytes;
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

function overloaded(): GatewayError {
  return errors.overloaded();
}
