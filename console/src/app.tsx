import { useState } from 'preact/hooks';
import { clearSession, loadSession, type Session } from './session.js';
import { SignIn } from './sign-in.js';
import { useRoute, go } from './ui/route.js';
import { DpoConsole } from './dpo/dpo-console.js';
import { RightsConsole } from './rights/rights-console.js';
import { LegalConsole } from './legal/legal-console.js';
import { ReviewerConsole } from './reviewer/reviewer-console.js';
import { AuditorConsole } from './auditor/auditor-console.js';
import { SubjectConsole } from './subjects/subject-console.js';

interface ConsoleEntry {
  path: string;
  label: string;
  /** Roles whose token the API lets read this console's data (the API decides; this only picks the tabs). */
  roles: string[];
}

const CONSOLES: ConsoleEntry[] = [
  { path: 'subjects', label: 'Data subjects', roles: ['dpo', 'admin'] },
  { path: 'dpo', label: 'Erasure requests', roles: ['dpo', 'admin'] },
  { path: 'rights', label: 'Subject rights', roles: ['dpo'] },
  { path: 'holds', label: 'Legal holds', roles: ['legal', 'admin'] },
  { path: 'review', label: 'Review queue', roles: ['reviewer'] },
  { path: 'audit', label: 'Audit', roles: ['auditor', 'dpo', 'admin'] },
];

export function App() {
  const [session, setSession] = useState<Session | null>(loadSession);
  const route = useRoute();
  if (!session) return <SignIn onSignedIn={setSession} />;
  const mine = CONSOLES.filter((c) => c.roles.some((r) => session.roles.includes(r)));
  const current = route[0] ?? mine[0]?.path ?? '';
  const signOut = () => {
    clearSession();
    setSession(null);
    go();
  };
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Lethe</span>
        <nav aria-label="Consoles">
          <ul>
            {mine.map((c) => (
              <li key={c.path}>
                <a href={`#/${c.path}`} aria-current={current === c.path ? 'page' : undefined}>
                  {c.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">
          {session.principal} · {session.roles.join(', ')} · tenant {session.tenant}
        </span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {mine.length === 0 && !route[0] && <p>This token has no role any console serves.</p>}
        {current === 'subjects' && <SubjectConsole session={session} route={route} />}
        {current === 'dpo' && <DpoConsole session={session} route={route} />}
        {current === 'rights' && <RightsConsole session={session} />}
        {current === 'holds' && <LegalConsole session={session} />}
        {current === 'review' && <ReviewerConsole session={session} route={route} />}
        {current === 'audit' && <AuditorConsole session={session} />}
      </main>
    </>
  );
}
