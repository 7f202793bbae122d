import type { Session } from '../session.js';
import { ReviewQueue } from './review-queue.js';
import { Dispute, SignOff } from './review-item.js';
import { CorrectionItem, CorrectionsWaiting } from './correction.js';

/** `#/review` (the queue), `#/review/sign-offs/{id}`, `#/review/disputes/{id}`, `#/review/corrections/{id}`. */
export function ReviewerConsole(props: { session: Session; route: string[] }) {
  const [, section, id] = props.route;
  if (section === 'sign-offs' && id) return <SignOff session={props.session} id={id} />;
  if (section === 'disputes' && id) return <Dispute session={props.session} id={id} />;
  if (section === 'corrections' && id) return <CorrectionItem session={props.session} id={id} />;
  return (
    <>
      <ReviewQueue session={props.session} />
      <CorrectionsWaiting session={props.session} />
    </>
  );
}
