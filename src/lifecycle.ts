import type { Config } from './config/index.js';

/**
 * A long-lived part of the gateway (a store, a connection, the ledger, the limiter, the parts a
 * configuration builds): built from its slice of the config, told of a reloaded slice where it
 * can change while running, and closed at shutdown. Adding a part is one entry in the list, not
 * edits in reload and in shutdown.
 */
export interface Part<Slice> {
  /** Applies the reloaded configuration's slice to new requests; absent for parts that cannot change while running. */
  reconfigure?(next: Slice): void | Promise<void>;
  /** Stops the part; work still pending (rows for a database that is away) is given up at `deadline` (epoch ms). */
  close(deadline: number): void | Promise<void>;
}

interface Entry {
  readonly name: string;
  readonly part: Part<unknown>;
  readonly slice: (config: Config) => unknown;
}

/** What a failed close left behind: the part's name and its error (shutdown goes on). */
export interface CloseFailure {
  readonly name: string;
  readonly error: unknown;
}

/**
 * The gateway's parts in the order they were built. Shutdown walks them backwards, so each part
 * closes while what it writes to (the database, Redis) is still open. A reload walks them
 * backwards too: the part built last (the live configuration, built on all the others) is the
 * only one that can refuse a configuration — a key it cannot parse — and it does so before any
 * other part has changed, so a refused reload changes nothing.
 */
export class PartList {
  private readonly entries: Entry[] = [];

  /** Adds `part`, fed on reload with `slice(config)`; answers the part, so a builder can be wrapped in place. */
  add<Slice, P extends Part<Slice>>(name: string, slice: (config: Config) => Slice, part: P): P {
    this.entries.push({ name, part: part as Part<unknown>, slice });
    return part;
  }

  async reconfigure(config: Config): Promise<void> {
    for (const { part, slice } of [...this.entries].reverse()) await part.reconfigure?.(slice(config));
  }

  /** Closes every part, last built first; a part that fails to close does not keep the others open. */
  async close(deadline: number): Promise<CloseFailure[]> {
    const failures: CloseFailure[] = [];
    for (const { name, part } of [...this.entries].reverse()) {
      try {
        await part.close(deadline);
      } catch (error) {
        failures.push({ name, error });
      }
    }
    return failures;
  }

  /** The parts' names in build order (logs, tests). */
  names(): string[] {
    return this.entries.map((entry) => entry.name);
  }
}

/** No slice: a part that only needs closing. */
export const NO_SLICE = (): undefined => undefined;
