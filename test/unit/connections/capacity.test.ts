import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectionCapFor } from '../../../src/connections/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const DEFAULT_UPSTREAM_SOCKETS = 2 * 256;

describe('connectionCapFor', () => {
  it.each([
    // [open-file limit, upstream sockets, cap]: 128 reserved, then room for the upstream sockets (at most half the rest).
    [1024, DEFAULT_UPSTREAM_SOCKETS, 448],
    [4096, DEFAULT_UPSTREAM_SOCKETS, 3456],
    [65_536, DEFAULT_UPSTREAM_SOCKETS, 64_896],
    [1024, 64, 832],
    [100, DEFAULT_UPSTREAM_SOCKETS, 1],
  ])('with %i open files and %i upstream sockets, holds %i client connections', (limit, upstreamSockets, cap) => {
    expect(connectionCapFor(null, upstreamSockets, limit)).toBe(cap);
  });

  it('takes server.maxConnections as it is when set', () => {
    expect(connectionCapFor(5000, DEFAULT_UPSTREAM_SOCKETS, 1024)).toBe(5000);
  });
});

/** openFileLimit() in a process of its own, started under a known limit. */
describe('openFileLimit', () => {
  it.runIf(process.platform === 'linux')('reads the soft open-file limit the process runs under', () => {
    const script = "const { openFileLimit } = await import('./src/connections/capacity.ts'); process.stdout.write(String(openFileLimit()));";
    const out = execFileSync('prlimit', ['--nofile=777:777', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT });
    expect(out.toString()).toBe('777');
  });
});
