import { ApiError } from '../api.js';
import { errorsFromApi, type FieldErrors } from './widgets.js';

/**
 * A form's submit: its own checks first (nothing is sent while a field is wrong), then the
 * call; an API error goes next to the field its `param` names (one of `fields`), else on top.
 */
export async function submitted<T>(fields: readonly string[], check: () => FieldErrors, send: () => Promise<T>, setErrors: (errors: FieldErrors) => void): Promise<T | null> {
  const problems = check();
  setErrors(problems);
  if (Object.keys(problems).length > 0) return null;
  try {
    return await send();
  } catch (err) {
    setErrors(err instanceof ApiError ? errorsFromApi(err, fields) : { '': String(err) });
    return null;
  }
}
