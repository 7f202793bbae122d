import type { Session } from '../session.js';
import { AccessRequests } from './access-requests.js';
import { SubjectPreview } from './subject-preview.js';
import { Rectifications } from './rectifications.js';

/**
 * The DPO's other rights (`#/rights`): what Lethe holds about a subject before anything is filed, access requests
 * with their signed package, and corrections of single memories.
 */
export function RightsConsole(props: { session: Session }) {
  return (
    <>
      <p class="hint">
        To answer one person&rsquo;s letter from one place — what Lethe holds, who read it, every request and every
        right — open <a href="#/subjects">Data subjects</a>.
      </p>
      <SubjectPreview session={props.session} />
      <AccessRequests session={props.session} />
      <Rectifications session={props.session} />
    </>
  );
}
