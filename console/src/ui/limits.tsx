import type { Limits } from '../api.js';
import { formatCost, formatCount } from './format.js';
import { Input, type FieldErrors } from './widgets.js';

/** The limits a form edits (SPEC 6.3, 14.3): whole counts, and money for the budgets. */
export const LIMIT_FIELDS = [
  { name: 'rpm', label: 'Requests per minute', money: false },
  { name: 'tpm', label: 'Tokens per minute', money: false },
  { name: 'costPerDay', label: 'Cost per day', money: true },
  { name: 'costPerMonth', label: 'Cost per month', money: true },
] as const;

export type LimitInputs = Readonly<Record<(typeof LIMIT_FIELDS)[number]['name'], string>>;

export const NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
export const NAME_RULE = '1-128 letters, digits, dots, underscores or hyphens';

export function limitInputs(limits: Limits = {}): LimitInputs {
  return Object.fromEntries(LIMIT_FIELDS.map(({ name }) => [name, limits[name] === undefined ? '' : String(limits[name])])) as LimitInputs;
}

/**
 * The form's limits as the API takes them, or the errors of the fields that are not numbers it
 * would accept. Empty = no limit. `kept`: the record's limits before the edit — those the form
 * does not show (tokensPerDay, concurrency, soft) are saved as they were, never dropped.
 */
export function parseLimits(inputs: LimitInputs, kept: Limits = {}): { limits: Limits; errors: Record<string, string> } {
  const limits: Record<string, number | boolean> = Object.fromEntries(Object.entries(kept).filter(([name]) => !LIMIT_FIELDS.some((field) => field.name === name)));
  const errors: Record<string, string> = {};
  for (const { name, money } of LIMIT_FIELDS) {
    const text = inputs[name].trim();
    if (text === '') continue;
    const value = Number(text);
    if (money ? !(value > 0) || !/^\d+(\.\d{1,9})?$/.test(text) : !/^[1-9]\d*$/.test(text)) {
      errors[name] = money ? 'Enter an amount above 0 (up to 9 decimals), or leave it empty for no limit.' : 'Enter a whole number above 0, or leave it empty for no limit.';
      continue;
    }
    limits[name] = value;
  }
  return { limits, errors };
}

export function LimitFields({ inputs, onChange, errors }: { readonly inputs: LimitInputs; readonly onChange: (next: LimitInputs) => void; readonly errors: FieldErrors }) {
  return (
    <fieldset class="limits">
      <legend>Limits (empty: none)</legend>
      {LIMIT_FIELDS.map(({ name, label, money }) => (
        <Input key={name} label={label} name={name} inputMode={money ? 'decimal' : 'numeric'} value={inputs[name]} onInput={(value) => onChange({ ...inputs, [name]: value })} errors={errors} />
      ))}
    </fieldset>
  );
}

/** `rpm 60 · cost/month 100.00`: a key's or team's limits on one line. */
export function limitsInWords(limits: Limits): string {
  const parts = LIMIT_FIELDS.filter(({ name }) => limits[name] !== undefined).map(({ name, money }) => `${name} ${money ? formatCost(limits[name]!) : formatCount(limits[name]!)}`);
  for (const name of ['tokensPerDay', 'concurrency'] as const) if (limits[name] !== undefined) parts.push(`${name} ${formatCount(limits[name])}`);
  if (limits.soft === true && parts.length > 0) parts.push('soft (alerts, never refuses)');
  return parts.length === 0 ? 'none' : parts.join(' · ');
}
