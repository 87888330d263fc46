import { useEffect, useState } from 'preact/hooks';
import { ApiError, signIn, signInOptions, type Session, type SignInOptions } from '../api.js';
import { errorsFromApi, FormError, Input, type FieldErrors } from '../ui/widgets.js';

/** Sign-in through the identity provider (SPEC 25), when configured: a link to the gateway's redirect, or why it cannot be used now. */
function IdentityProviderSignIn({ oidc }: { readonly oidc: NonNullable<SignInOptions['oidc']> }) {
  if (!oidc.ready) {
    return (
      <div class="banner" role="alert" id="sso-unavailable">
        Sign-in with {oidc.name} is unavailable: {oidc.message ?? 'the identity provider cannot be reached.'}
      </div>
    );
  }
  return (
    <p>
      <a class="button" id="sso-sign-in" href="/admin/oidc/login">
        Sign in with {oidc.name}
      </a>
    </p>
  );
}

/** Sign-in with an admin key: exchanged for a session cookie at once; the key is kept nowhere. */
function KeySignIn({ onSignedIn }: { readonly onSignedIn: (session: Session) => void }) {
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
    <form onSubmit={submit} noValidate aria-label="Sign in">
      <Input label="Admin key" name="key" type="password" autoComplete="off" spellcheck={false} value={key} onInput={setKey} errors={errors} hint="Any admin key: admin, viewer or team-admin. It is exchanged for a session and not stored." />
      <FormError errors={errors} />
      <button type="submit" disabled={busy}>Sign in</button>
    </form>
  );
}

/** The sign-in page: the identity provider when configured, the admin key form unless `console.keySignIn` is false. */
export function SignIn({ notice, onSignedIn, databaseDown }: { readonly notice: string | null; readonly onSignedIn: (session: Session) => void; readonly databaseDown: boolean }) {
  const [options, setOptions] = useState<SignInOptions | null>(null);
  useEffect(() => {
    // An older gateway (or a failed read) offers the key form, as before.
    signInOptions().then(setOptions, () => setOptions({ keySignIn: true, oidc: null }));
  }, []);
  return (
    <main class="sign-in" id="main">
      <h1>Tollgate console</h1>
      {databaseDown && <div class="banner" role="alert">The gateway's database cannot be reached right now. Retry shortly.</div>}
      {notice !== null && <p role="status" class="notice">{notice}</p>}
      {options?.oidc && <IdentityProviderSignIn oidc={options.oidc} />}
      {options?.oidc && options.keySignIn && <p class="hint">Or, in an emergency, with an admin key:</p>}
      {options?.keySignIn && <KeySignIn onSignedIn={onSignedIn} />}
    </main>
  );
}
