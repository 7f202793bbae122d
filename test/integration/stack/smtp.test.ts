import { describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import { loadStackConfig } from '../../../stack/stack-config.js';
import { waitForMessage } from '../../../stack/smtp/mailbox.js';
import { testConfig, uniqueId } from '../../support/harness.js';

describe('SMTP capture server', () => {
  it('receives a message sent with nodemailer over SMTP and keeps it for reading back', async () => {
    const config = testConfig();
    const transport = nodemailer.createTransport({
      host: config.smtp.host,
      port: config.smtp.port,
      secure: false,
      ignoreTLS: true,
    });
    const subject = uniqueId('stack-check');
    await transport.sendMail({ from: config.smtp.from, to: 'dpo@example.test', subject, text: 'hello from lethe' });
    transport.close();
    const message = await waitForMessage(loadStackConfig().smtp.captureDir, (m) => m.subject === subject);
    expect(message.to).toEqual(['dpo@example.test']);
    expect(message.text.trim()).toBe('hello from lethe');
  });
});
