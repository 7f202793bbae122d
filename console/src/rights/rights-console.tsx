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
      <SubjectPreview session={props.session} />
      <AccessRequests session={props.session} />
      <Rectifications session={props.session} />
    </>
  );
}
