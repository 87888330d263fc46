import { describe, expect, it } from 'vitest';
import { areaOf, areasTable } from '../load-runs/profile-areas.js';
import type { CpuProfile } from '../load-runs/profile-summary.js';

describe('CPU profile areas', () => {
  it('names the area of a frame from its location, and leaves start-up out', () => {
    expect(areaOf({ name: 'run', location: 'src/pipeline/index.ts:28' })).toBe('src/pipeline');
    expect(areaOf({ name: 'handle', location: 'src/live.ts:44' })).toBe('src/live.ts');
    expect(areaOf({ name: 'execPipeline', location: '/srv/node_modules/ioredis/built/Pipeline.js:293' })).toBe('ioredis');
    expect(areaOf({ name: 'LOG', location: '/srv/node_modules/pino/lib/tools.js:47' })).toBe('pino (request log)');
    expect(areaOf({ name: 'stream', location: '/srv/node_modules/http-proxy-3/dist/lib/http-proxy/passes/web-incoming.js:90' })).toBe('http-proxy-3');
    expect(areaOf({ name: 'socketOnData', location: 'node:_http_client:537' })).toBe('Node HTTP, net, streams, events');
    expect(areaOf({ name: 'writev', location: '—' })).toBe('socket writes (syscalls)');
    expect(areaOf({ name: '(garbage collector)', location: '—' })).toBe('garbage collector');
    expect(areaOf({ name: 'wrapSafe', location: 'node:internal/modules/cjs/loader:1422' })).toBeUndefined();
    expect(areaOf({ name: 'compileSourceTextModule', location: 'node:internal/modules/esm/utils:344' })).toBeUndefined();
  });

  it('scales each area\'s share of busy time (start-up left out) by the CPU µs per request', () => {
    // Root → a (src/pipeline), b (writev), c (module loading): 3, 1 and 4 samples of 10 µs; idle not counted.
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1, columnNumber: -1 } },
        { id: 2, callFrame: { functionName: 'run', url: 'file:///repo/src/pipeline/index.ts', lineNumber: 0, columnNumber: 0 } },
        { id: 3, callFrame: { functionName: 'writev', url: '', lineNumber: -1, columnNumber: -1 } },
        { id: 4, callFrame: { functionName: 'wrapSafe', url: 'node:internal/modules/cjs/loader', lineNumber: 0, columnNumber: 0 } },
        { id: 5, callFrame: { functionName: '(idle)', url: '', lineNumber: -1, columnNumber: -1 } },
      ],
      startTime: 0,
      endTime: 100,
      samples: [2, 2, 2, 3, 4, 4, 4, 4, 5, 5],
      timeDeltas: [10, 10, 10, 10, 10, 10, 10, 10, 10, 10],
    };
    const table = areasTable([{ name: 'gw', profile, cpuMicrosPerRequest: 400 }]);
    expect(table.split('\n')).toEqual(['| area | gw µs/req |', '|---|--:|', '| src/pipeline | 300.0 |', '| socket writes (syscalls) | 100.0 |', '| **all** | **400.0** |']);
  });
});
