import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { machineProblem, REQUIRED } from '../../helpers/machine-check.js';

/** A folder holding executables of the given names (each `exit <status>`). */
function binDir(names: string[], status = 0): string {
  const dir = mkdtempSync(join(tmpdir(), 'machine-check-'));
  for (const name of names) {
    writeFileSync(join(dir, name), `#!/bin/sh\nexit ${status}\n`);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

describe('the pre-check of npm test (vitest globalSetup)', () => {
  it('names every missing command, its Debian package and the command that installs it, in one line', () => {
    expect(machineProblem([binDir(['redis-server', 'pg_isready'])], '/nonexistent/chromium')).toBe(
      'npm test needs promtool, prometheus, chromium (Debian: prometheus chromium): run "bash .ci/run", which installs them and runs npm test (or apt-get install prometheus chromium)',
    );
  });

  it('takes CHROMIUM_PATH for chromium', () => {
    const dir = binDir(['redis-server', 'promtool', 'prometheus', 'pg_isready']);
    expect(machineProblem([dir], join(binDir(['chromium']), 'chromium'))).toBeNull();
  });

  it('says so when PostgreSQL does not answer', () => {
    expect(machineProblem([binDir(REQUIRED.map((r) => r.command), 2)])).toBe(
      'npm test needs PostgreSQL answering on 127.0.0.1:5432 (trust auth, user postgres): run "bash .ci/run", which starts it and runs npm test',
    );
  });
});
