import { randomUUID } from 'node:crypto';

const ACCEPTABLE = /^[\x21-\x7e]{1,200}$/;

/** The client's x-request-id when it is a sane token (visible ASCII, ≤200 chars), else a new UUID. */
export function requestIdFor(incoming: string | string[] | undefined): string {
  if (typeof incoming === 'string' && ACCEPTABLE.test(incoming)) return incoming;
  return randomUUID();
}
