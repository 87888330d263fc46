import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a benchmark child sends its parent once it listens. */
export interface ListeningMessage {
  readonly type: 'listening';
  readonly port: number;
}

/** Tells the parent (over the fork IPC channel) which port the OS gave this child. */
export function announceListening(server: Server): void {
  announcePort((server.address() as AddressInfo).port);
}

/** The same, for a process that listens through others (a cluster primary through its workers). */
export function announcePort(port: number): void {
  const message: ListeningMessage = { type: 'listening', port };
  process.send?.(message);
}

export function isListeningMessage(message: unknown): message is ListeningMessage {
  return typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'listening';
}

/**
 * Exits cleanly (so `--cpu-prof` can write its profile) on SIGTERM/SIGINT, and also when the
 * parent goes away without a word (its IPC channel closes): a child never outlives the run.
 */
export function exitWithParent(close: () => Promise<void>): void {
  let exiting = false;
  const exit = (): void => {
    if (exiting) return;
    exiting = true;
    const hardStop = setTimeout(() => process.exit(0), 3000);
    hardStop.unref();
    close()
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.once('SIGTERM', exit);
  process.once('SIGINT', exit);
  process.once('disconnect', exit);
}
