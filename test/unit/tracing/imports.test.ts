import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * src/tracing imports no file of its own that imports it back (STYLE: no import circles): each
 * file's relative imports within the folder, walked for a path that comes back to where it
 * started. And the folder stays small (the bound: under 15 files, each under ~300 lines).
 */

const FOLDER = join(import.meta.dirname, '../../../src/tracing');

function importsWithin(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(FOLDER).filter((name) => name.endsWith('.ts'))) {
    const text = readFileSync(join(FOLDER, file), 'utf8');
    const targets = [...text.matchAll(/from '\.\/([\w-]+)\.js'/g)].map((match) => `${match[1]}.ts`);
    graph.set(file, targets);
  }
  return graph;
}

/** Every circle in the graph, as the files on it (the first found from each file). */
function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const walk = (file: string, path: string[]): void => {
    for (const next of graph.get(file) ?? []) {
      if (next === path[0]) found.push([...path, next]);
      else if (!path.includes(next)) walk(next, [...path, next]);
    }
  };
  for (const file of graph.keys()) walk(file, [file]);
  return found;
}

describe('src/tracing', () => {
  it('has no import circle between its files', () => {
    const graph = importsWithin();
    expect(graph.size).toBeGreaterThan(3);
    expect(circles(graph)).toEqual([]);
  });

  it('is under 15 files, each under 300 lines', () => {
    const files = readdirSync(FOLDER);
    expect(files.length).toBeLessThan(15);
    const long = files.filter((file) => readFileSync(join(FOLDER, file), 'utf8').split('\n').length > 300);
    expect(long).toEqual([]);
  });
});
