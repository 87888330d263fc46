import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The chat worker is a file of its own: it must start both from the build (dist/, as `npm
// start` runs) and from the TypeScript sources (vitest, `node --import tsx`). Each run is a
// plain Node process that checks a 6 MB body, which only a worker takes.

const run = promisify(execFile);
const root = process.cwd();

const SCRIPT = `
const { createChatBodyChecker } = await import(process.argv[1]);
const checker = createChatBodyChecker({ defaultCompletionTokens: 1, forceStreamUsage: true });
const message = '{"role":"user","content":"abcd"}';
const body = Buffer.from('{"model":"m","stream":true,"messages":[' + Array(200000).fill(message).join(',') + ']}');
const pending = checker.check(body, 'application/json');
const result = await pending;
const invalid = await checker.check(Buffer.from('{"messages":' + '[1,'.repeat(3000000) + '}'), undefined);
await checker.close();
console.log(JSON.stringify({
  inWorker: pending instanceof Promise,
  facts: result.ok ? { ...result.facts, forwardBytes: result.facts.forwardBytes.length - body.length } : result,
  invalid: invalid.ok ? 'ok' : JSON.parse(invalid.body).detail[0].type,
}));
`;

const EXPECTED = {
  inWorker: true,
  facts: { model: 'm', estimatedTokens: 200_001, promptChars: 800_000, stream: true, usageForced: true, forwardBytes: 40, sampling: { stream: true } },
  invalid: 'json_invalid',
};

async function checkIn(moduleUrl: string, execArgv: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, [...execArgv, '--input-type=module', '-e', SCRIPT, moduleUrl], { cwd: root, timeout: 60_000 });
  return JSON.parse(stdout) as unknown;
}

describe('the chat worker starts wherever the checker runs from', () => {
  let outDir = '';
  beforeAll(async () => {
    // Under the checkout, so the build resolves this checkout's node_modules; .tmp/ is
    // ignored by git and absent from a fresh clone.
    await mkdir(join(root, '.tmp'), { recursive: true });
    outDir = await mkdtemp(join(root, '.tmp', 'build-'));
    await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', outDir], { cwd: root });
  }, 120_000);
  afterAll(async () => {
    if (outDir) await rm(outDir, { recursive: true, force: true });
  });

  it('runs from the tsc build with plain node', async () => {
    expect(await checkIn(pathToFileURL(join(outDir, 'src/validation/index.js')).href, [])).toEqual(EXPECTED);
  });

  it('runs from the TypeScript sources with node --import tsx', async () => {
    expect(await checkIn(pathToFileURL(join(root, 'src/validation/index.ts')).href, ['--import', 'tsx'])).toEqual(EXPECTED);
  });
});
