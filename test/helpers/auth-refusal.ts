import { AuthFailure } from '../../src/auth/failure.js';

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
