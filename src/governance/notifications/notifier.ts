import type { Transporter } from 'nodemailer';

/** A notification: ids, counts and states only — never memory content or subject identifiers. */
export interface Notification {
  to: string;
  subject: string;
  text: string;
}

/** Sends notifications (e-mail through nodemailer; Mailpit or the capture server locally). */
export interface Notifier {
  send(notification: Notification): Promise<void>;
}

export function createMailNotifier(transport: Transporter, from: string): Notifier {
  return {
    async send(notification) {
      await transport.sendMail({ from, to: notification.to, subject: notification.subject, text: notification.text });
    },
  };
}
