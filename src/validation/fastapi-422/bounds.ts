/*
 * How large a 422 may grow. FastAPI lists every error and echoes every input whole, so a
 * 2 MB body of a million numbers used to answer 107 MB. The gateway lists at most
 * MAX_DETAIL_ITEMS errors (plus one item counting the rest) and shares one budget between
 * the echoed inputs; below these bounds the body is byte-identical to FastAPI's.
 */

/** Errors listed in a 422; past this, one `too_many_errors` item counts the ones left out. */
export const MAX_DETAIL_ITEMS = 100;

/** UTF-8 bytes of echoed `input` values shared by all the items of one 422. */
export const ECHO_BUDGET_BYTES = 8 * 1024;

/**
 * Bytes every item may echo even once the shared budget is spent, so that short inputs
 * (`1`, `"hi"`, `{}`) stay exact after one large echo. At least the truncation marker.
 */
export const ECHO_FLOOR_BYTES = 32;

/**
 * No 422 body is longer than this, whatever the request (so it is never more than the
 * request's length plus this). Worked out as: 101 item frames of at most 163 bytes (the
 * longest type, msg and loc with a 16-digit index) + the echo budget + 101 floors + 13
 * bytes of `{"detail":[` and `]}` = 27,839; rounded up. A test builds the worst case.
 */
export const MAX_VALIDATION_BODY_BYTES = 32 * 1024;
