import type { ModelsTable } from '../api.js';
import { Input, type FieldErrors } from './widgets.js';

/** `a, @b` → ['a', '@b']; empty text → null: no list of its own (the default, or the team's, applies). */
export function parseModels(text: string): string[] | null {
  const patterns = text.split(',').map((part) => part.trim()).filter(Boolean);
  return patterns.length === 0 ? null : patterns;
}

export const modelsText = (models: readonly string[] | null | undefined): string => (models ?? []).join(', ');

/** A list's words in a table cell: its patterns, or what applies without one. */
export const modelsInWords = (models: readonly string[] | null | undefined, without: string): string => (models === null || models === undefined ? without : models.length === 0 ? 'none' : models.join(', '));

/** The models field of the key and team forms: patterns, `*` wildcards and the groups offered by name. */
export function ModelsField({ value, onInput, errors, groups }: { readonly value: string; readonly onInput: (value: string) => void; readonly errors: FieldErrors; readonly groups: ModelsTable['groups'] | undefined }) {
  const names = Object.keys(groups ?? {}).map((name) => `@${name}`);
  const offered = names.length === 0 ? '' : ` Groups: ${names.join(', ')}.`;
  return <Input label="Models" name="models" value={value} onInput={onInput} errors={errors} hint={`Comma-separated model names or patterns (* wildcard); empty: no list of its own.${offered}`} />;
}
