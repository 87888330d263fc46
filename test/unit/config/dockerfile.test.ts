import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Docker does not run on these machines: the Dockerfile is checked by what it says. */
describe('Dockerfile', () => {
  const text = readFileSync('Dockerfile', 'utf8');
  const stages = text.split(/^FROM /m).slice(1).map((stage) => ({ name: /AS (\w+)/.exec(stage)?.[1] ?? '', body: stage }));
  const stage = (name: string): string => stages.find((s) => s.name === name)?.body ?? '';

  it('builds in stages: compile, production dependencies, a runtime that has neither the compiler nor dev dependencies', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'deps', 'runtime']);
    expect(stage('build')).toMatch(/npm ci --no-audit --no-fund/);
    expect(stage('deps')).toMatch(/npm ci --omit=dev/);
    expect(stage('runtime')).not.toMatch(/npm ci|apt-get install/);
    expect(stage('runtime')).toMatch(/COPY --from=deps \/app\/node_modules/);
    expect(stage('runtime')).toMatch(/COPY --from=build \/app\/dist/);
  });

  it('compiles better-sqlite3 where it is installed (python3, make, g++ in build and deps)', () => {
    for (const name of ['build', 'deps']) expect(stage(name)).toMatch(/apt-get install -y --no-install-recommends python3 make g\+\+/);
  });

  it('runs as the non-root node user, with a writable volume for the SQLite file, and a health check on /healthz', () => {
    const runtime = stage('runtime');
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/mkdir -p \/app\/data && chown node:node \/app\/data/);
    expect(runtime).toMatch(/^VOLUME \["\/app\/data"\]$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n.*\/healthz/m);
    expect(runtime.indexOf('USER node')).toBeGreaterThan(runtime.indexOf('chown node:node'));
  });

  it('compiles only src (no benchmark in the image)', () => {
    expect(stage('build')).not.toMatch(/COPY bench/);
  });
});
