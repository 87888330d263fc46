import { AuthFailure } from '../../src/auth/index.js';
import { GatewayError } from '../../src/errors.js';

export type AuthRefusal = { status: number; code: string; reason: string; message: string } | 'accepted';

/** Which failure an authentication throws, as the client sees it (status, code, reason, message); 'accepted' when none. */
export function authRefusal(run: () => unknown): AuthRefusal {
  try {
    run();
    return 'accepted';
  } catch (err) {
    if (!(err instanceof AuthFailure)) throw err;
    return { status: err.status, code: err.code, reason: err.reason, message: err.message };
  }
}

export interface GatewayRejection {
  status: number;
  code: string;
  param: string | null;
  message: string;
  headers: Readonly<Record<string, string>>;
}

/** What the GatewayError a call rejects with tells the client; fails when the call is not refused. */
export async function gatewayRejection(run: () => unknown): Promise<GatewayRejection> {
  try {
    await run();
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { status: err.status, code: err.code, param: err.param, message: err.message, headers: err.headers };
  }
  throw new Error('the call was not refused');
}

/** The 503 an admin write answers while the database cannot be reached (nothing was changed). */
export const UNAVAILABLE_FOR_CHANGE: GatewayRejection = {
  status: 503,
  code: 'database_unavailable',
  param: null,
  message: 'The database cannot be reached, so the change was not made; retry shortly.',
  headers: { 'retry-after': '1' },
};
