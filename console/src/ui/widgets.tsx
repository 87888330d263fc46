import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import type { ApiError } from '../api.js';

/** Field errors by field name: a form's own checks and the API's `param`. */
export type FieldErrors = Readonly<Record<string, string>>;

interface InputProps {
  readonly type?: 'text' | 'password' | 'date';
  readonly inputMode?: 'numeric' | 'decimal';
  readonly autoComplete?: 'off';
  readonly spellcheck?: boolean;
  readonly required?: boolean;
  readonly label: string;
  readonly name: string;
  readonly value: string;
  readonly onInput: (value: string) => void;
  readonly errors?: FieldErrors;
  readonly hint?: string;
}

/** A labelled input whose error (from the form or from the API's `param`) is shown under it and announced. */
export function Input({ label, name, value, onInput, errors = {}, hint, type = 'text', ...rest }: InputProps) {
  const id = useId();
  const error = errors[name];
  const described = [hint === undefined ? '' : `${id}-hint`, error === undefined ? '' : `${id}-error`].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        {...rest}
        // Preact's input typings are a union keyed by `type` literal; a union-typed `type` needs this narrowing.
        type={type as 'text'}
        id={id}
        name={name}
        value={value}
        aria-invalid={error === undefined ? undefined : 'true'}
        aria-describedby={described === '' ? undefined : described}
        onInput={(event) => onInput(event.currentTarget.value)}
      />
      {hint !== undefined && <p class="hint" id={`${id}-hint`}>{hint}</p>}
      {error !== undefined && <p class="field-error" id={`${id}-error`} role="alert">{error}</p>}
    </div>
  );
}

interface SelectProps {
  readonly label: string;
  readonly name: string;
  readonly value: string;
  readonly options: ReadonlyArray<readonly [value: string, label: string]>;
  readonly onChange: (value: string) => void;
  readonly errors?: FieldErrors;
}

export function Select({ label, name, value, options, onChange, errors = {} }: SelectProps) {
  const id = useId();
  const error = errors[name];
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} name={name} value={value} aria-invalid={error === undefined ? undefined : 'true'} aria-describedby={error === undefined ? undefined : `${id}-error`} onChange={(event) => onChange(event.currentTarget.value)}>
        {options.map(([optionValue, optionLabel]) => (
          <option key={optionValue} value={optionValue}>{optionLabel}</option>
        ))}
      </select>
      {error !== undefined && <p class="field-error" id={`${id}-error`} role="alert">{error}</p>}
    </div>
  );
}

/**
 * Where an API error goes: next to the field its `param` names when the form has one
 * (`limits.rpm` → `rpm` too), otherwise at the form's top (key `''`).
 */
export function errorsFromApi(error: ApiError, fields: readonly string[]): FieldErrors {
  const param = error.param ?? '';
  const field = fields.find((name) => name === param || param.endsWith(`.${name}`));
  return field === undefined ? { '': error.message } : { [field]: error.message };
}

/** A form's general error (key `''`). */
export function FormError({ errors }: { readonly errors: FieldErrors }) {
  const message = errors[''];
  return message === undefined ? null : <p class="form-error" role="alert">{message}</p>;
}

/** A failed load, in words (the API's message). */
export function LoadError({ error }: { readonly error: ApiError | null }) {
  if (error === null || error.status === 401) return null;
  return <p class="form-error" role="alert">{error.message}</p>;
}

export interface Column<T> {
  readonly label: string;
  readonly cell: (row: T) => ComponentChildren;
  /** Right-aligned numbers. */
  readonly numeric?: boolean;
}

/**
 * A table with a caption and header cells. On a phone each row becomes a card whose cells are
 * labelled by their column (`data-label`); the explicit roles keep it a table for screen readers
 * when CSS changes its display.
 */
export function DataTable<T>({ caption, columns, rows, rowKey, empty = 'Nothing yet.' }: { readonly caption: string; readonly columns: ReadonlyArray<Column<T>>; readonly rows: readonly T[]; readonly rowKey: (row: T) => string; readonly empty?: string }) {
  return (
    <div class="table-wrap">
      <table role="table" aria-label={caption}>
        <caption>{caption}</caption>
        <thead role="rowgroup">
          <tr role="row">
            {columns.map((column) => (
              <th role="columnheader" scope="col" key={column.label} class={column.numeric ? 'num' : undefined}>{column.label}</th>
            ))}
          </tr>
        </thead>
        <tbody role="rowgroup">
          {rows.length === 0 ? (
            <tr role="row">
              <td role="cell" colSpan={columns.length} class="empty">{empty}</td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr role="row" key={rowKey(row)}>
                {columns.map((column) => (
                  <td role="cell" key={column.label} data-label={column.label} class={column.numeric ? 'num' : undefined}>{column.cell(row)}</td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

/** A figure: a heading and its content, the unit of a page. */
export function Panel({ title, children, actions }: { readonly title: string; readonly children: ComponentChildren; readonly actions?: ComponentChildren }) {
  return (
    <section class="panel" aria-label={title}>
      <div class="panel-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

/** Spent against a limit, as a bar with its numbers in words. */
export function Budget({ label, spent, limit, format }: { readonly label: string; readonly spent: number; readonly limit: number; readonly format: (n: number) => string }) {
  const share = limit > 0 ? Math.min(1, spent / limit) : 0;
  return (
    <div class="budget">
      <span class="budget-label">{label}: {format(spent)} of {format(limit)}</span>
      <meter min={0} max={limit} value={Math.min(spent, limit)} low={limit * 0.8} high={limit * 0.95} optimum={0} aria-label={`${label}: ${format(spent)} of ${format(limit)}`} data-share={share.toFixed(2)} />
    </div>
  );
}
