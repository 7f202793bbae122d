import { useState } from 'preact/hooks';
import { sessionOf, saveSession, type Session } from './session.js';
import { Field, described } from './ui/controls.js';

/** Sign-in by pasting a token (`lethe token mint`); it is kept in this tab's sessionStorage only. */
export function SignIn(props: { onSignedIn: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = (event: Event) => {
    event.preventDefault();
    const session = sessionOf(token);
    if ('error' in session) return setError(session.error);
    saveSession(session);
    props.onSignedIn(session);
  };
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to the Lethe consoles</h1>
      <form onSubmit={submit} noValidate>
        <Field
          id="token"
          label="Token"
          error={error}
          hint="Paste a token from `lethe token mint`. It stays in this tab only and is never put in a URL."
        >
          <textarea
            {...described('token', error, true)}
            rows={4}
            autocomplete="off"
            spellcheck={false}
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </Field>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
