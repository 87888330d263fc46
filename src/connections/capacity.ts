import { readFileSync } from 'node:fs';

/**
 * Descriptors kept out of the client cap whatever the limit: stdio, the listeners, epoll and
 * worker-thread handles, Redis, the database pool, the SQLite files, a JWKS fetch (an idle
 * gateway holds about 35).
 */
export const RESERVED_DESCRIPTORS = 128;
/** Where the open-file limit cannot be read (not Linux): macOS's OPEN_MAX, which Node raises its soft limit to. */
const FALLBACK_OPEN_FILE_LIMIT = 10_240;

/** The process's soft open-file limit (RLIMIT_NOFILE), or undefined where /proc cannot tell. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    const value = Number(soft);
    return Number.isFinite(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The most client connections to hold open: `configured` when set, else what the open-file
 * limit leaves after the fixed reserve and the upstream sockets. A client connection holds at
 * most one upstream socket at a time, so the upstream share is the smaller of the pools' total
 * (`maxSockets` of every upstream) and half of what remains: with 1,024 files that is 448
 * clients, with 65,536 it is 64,896.
 */
export function connectionCapFor(configured: number | null, upstreamSockets: number, limit = openFileLimit() ?? FALLBACK_OPEN_FILE_LIMIT): number {
  if (configured !== null) return configured;
  const available = Math.max(0, limit - RESERVED_DESCRIPTORS);
  const upstreamShare = Math.min(upstreamSockets, Math.floor(available / 2));
  return Math.max(1, available - upstreamShare);
}
