/**
 * Team and project names (SPEC 6.2): 1–128 of `[A-Za-z0-9._-]`. The one definition every
 * concern checks against: the project header, config keys and limits, JWT team claims,
 * keygen and admin query parameters.
 */
export const NAME_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

/** How the rule reads in an error message. */
export const NAME_RULE = '1-128 of [A-Za-z0-9._-]';

export function isValidName(value: string): boolean {
  return NAME_PATTERN.test(value);
}
