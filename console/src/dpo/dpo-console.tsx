import type { Session } from '../session.js';
import { FileRequest } from './file-request.js';
import { RequestDetail } from './request-detail.js';
import { RequestList } from './request-list.js';

/** The DPO console: `#/dpo` lists and files, `#/dpo/requests/{id}` follows one request. */
export function DpoConsole(props: { session: Session; route: string[] }) {
  const [, section, id] = props.route;
  if (section === 'requests' && id) return <RequestDetail session={props.session} id={id} />;
  return (
    <>
      <FileRequest session={props.session} />
      <RequestList session={props.session} />
    </>
  );
}
