import { useState } from 'preact/hooks';
import type { Session } from '../api.js';
import { NAME_PATTERN, NAME_RULE } from './limits.js';
import { FormError, Input, Select, type FieldErrors } from './widgets.js';

/** The filters the usage, requests and audit pages share: a UTC day range and optional names. */
export type Filters = Readonly<Record<string, string>>;

export interface FilterField {
  readonly name: string;
  readonly label: string;
  /** A team or project name (checked against the name rule), or free text (a key id, an action). */
  readonly kind: 'name' | 'text' | 'select';
  readonly options?: ReadonlyArray<readonly [string, string]>;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function check(values: Filters, fields: readonly FilterField[]): FieldErrors {
  const problems: Record<string, string> = {};
  for (const name of ['from', 'to']) if (!DAY.test(values[name] ?? '')) problems[name] = 'Choose a day.';
  if (problems.from === undefined && problems.to === undefined && values.from! > values.to!) problems.from = 'The first day must not be after the last.';
  for (const field of fields) {
    const value = values[field.name] ?? '';
    if (field.kind === 'name' && value !== '' && !NAME_PATTERN.test(value)) problems[field.name] = `Enter ${NAME_RULE}, or leave it empty.`;
  }
  return problems;
}

/**
 * A filter form: changes apply when it is submitted (checked first); `apiErrors` are the
 * page's last load error placed by its `param` (a parameter the API refused).
 */
export function FilterForm({ label, initial, fields, onApply, apiErrors }: { readonly label: string; readonly initial: Filters; readonly fields: readonly FilterField[]; readonly onApply: (filters: Filters) => void; readonly apiErrors: FieldErrors }) {
  const [values, setValues] = useState<Filters>(initial);
  const [errors, setErrors] = useState<FieldErrors>({});
  const set = (name: string) => (value: string) => setValues({ ...values, [name]: value });
  const apply = (event: Event): void => {
    event.preventDefault();
    const problems = check(values, fields);
    setErrors(problems);
    if (Object.keys(problems).length === 0) onApply(values);
  };
  const shown = Object.keys(errors).length > 0 ? errors : apiErrors;
  return (
    <form class="filters" onSubmit={apply} noValidate aria-label={label}>
      <Input label="From (UTC day)" name="from" type="date" value={values.from ?? ''} onInput={set('from')} errors={shown} />
      <Input label="To (UTC day)" name="to" type="date" value={values.to ?? ''} onInput={set('to')} errors={shown} />
      {fields.map((field) =>
        field.kind === 'select' ? (
          <Select key={field.name} label={field.label} name={field.name} value={values[field.name] ?? ''} options={field.options ?? []} onChange={set(field.name)} errors={shown} />
        ) : (
          <Input key={field.name} label={field.label} name={field.name} value={values[field.name] ?? ''} onInput={set(field.name)} errors={shown} />
        ),
      )}
      <FormError errors={shown} />
      <div class="actions">
        <button type="submit">Apply</button>
      </div>
    </form>
  );
}

/** A team-admin sees its own team only: no team filter to choose. */
export const teamFilter = (session: Session): FilterField[] => (session.role === 'team-admin' ? [] : [{ name: 'team', label: 'Team', kind: 'name' }]);
