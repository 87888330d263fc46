import { useState } from 'preact/hooks';
import { ApiError, signIn, type Session } from '../api.js';
import { errorsFromApi, FormError, Input, type FieldErrors } from '../ui/widgets.js';

/** Sign-in with an admin key: exchanged for a session cookie at once; the key is kept nowhere. */
export function SignIn({ notice, onSignedIn, databaseDown }: { readonly notice: string | null; readonly onSignedIn: (session: Session) => void; readonly databaseDown: boolean }) {
  const [key, setKey] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    if (key.trim() === '') return setErrors({ key: 'Enter an admin key.' });
    setBusy(true);
    try {
      const session = await signIn(key.trim());
      setKey('');
      onSignedIn(session);
    } catch (err) {
      setErrors(err instanceof ApiError ? errorsFromApi(err.status === 401 || err.status === 429 ? new ApiError(err.status, err.code, err.message, 'key') : err, ['key']) : { '': String(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <h1>Tollgate console</h1>
      {databaseDown && <div class="banner" role="alert">The gateway's database cannot be reached right now. Retry shortly.</div>}
      {notice !== null && <p role="status" class="notice">{notice}</p>}
      <form onSubmit={submit} noValidate aria-label="Sign in">
        <Input label="Admin key" name="key" type="password" autoComplete="off" spellcheck={false} value={key} onInput={setKey} errors={errors} hint="Any admin key: admin, viewer or team-admin. It is exchanged for a session and not stored." />
        <FormError errors={errors} />
        <button type="submit" disabled={busy}>Sign in</button>
      </form>
    </main>
  );
}
