import { readFileSync } from 'node:fs';

/**
 * The folders `npm run mutation` covers, each with the tests that guard it
 * (test/mutation-folders.json, read by stryker.config.mjs too). MUTATION_FOLDER=<name> narrows a
 * run to one folder and its tests; unset, every folder runs against all their tests.
 */
export interface MutationFolder {
  readonly mutate: readonly string[];
  readonly tests: readonly string[];
}

export const MUTATION_FOLDERS = JSON.parse(readFileSync(new URL('./mutation-folders.json', import.meta.url), 'utf8')) as Record<string, MutationFolder>;

export function chosenFolders(name: string | undefined): MutationFolder[] {
  if (name === undefined || name === '') return Object.values(MUTATION_FOLDERS);
  const folder = MUTATION_FOLDERS[name];
  if (!folder) throw new Error(`MUTATION_FOLDER=${name}: not one of ${Object.keys(MUTATION_FOLDERS).join(', ')}`);
  return [folder];
}
