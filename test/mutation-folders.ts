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

/** Each folder's root: what its `mutate` globs share before the first wildcard (`src/metering/**\/*.ts` → `src/metering`). */
const FOLDER_ROOTS = Object.values(MUTATION_FOLDERS)
  .flatMap((folder) => folder.mutate.filter((glob) => !glob.startsWith('!')).map((glob) => glob.slice(0, glob.indexOf('*')).replace(/\/$/, '')))
  .sort((a, b) => b.length - a.length);

/**
 * The folder a mutated file is scored under, and its name there: a file in a subfolder counts
 * with its folder (`src/metering/taps/usage.ts` is `taps/usage.ts` of `src/metering`). A file
 * under no folder's root counts under its own directory.
 */
export function guardFolderOf(file: string): { folder: string; name: string } {
  const root = FOLDER_ROOTS.find((prefix) => file.startsWith(`${prefix}/`));
  if (root !== undefined) return { folder: root, name: file.slice(root.length + 1) };
  const slash = file.lastIndexOf('/');
  return { folder: file.slice(0, Math.max(0, slash)), name: file.slice(slash + 1) };
}
