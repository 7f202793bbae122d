/** Reads the messages the capture server kept, for tests and the demo. */
import fs from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';

export interface CapturedMessage {
  id: string;
  receivedAt: string;
  from: string | null;
  to: string[];
  subject: string;
  text: string;
  raw: string;
}

export async function readMailbox(dir: string): Promise<CapturedMessage[]> {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  names.sort();
  const messages: CapturedMessage[] = [];
  for (const name of names) {
    const envelope = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as Omit<
      CapturedMessage,
      'subject' | 'text' | 'raw'
    >;
    const raw = fs.readFileSync(path.join(dir, `${envelope.id}.eml`), 'utf8');
    const parsed = await simpleParser(raw);
    messages.push({ ...envelope, subject: parsed.subject ?? '', text: parsed.text ?? '', raw });
  }
  return messages;
}

/** Waits until a message matching the predicate arrives (polling the capture directory). */
export async function waitForMessage(
  dir: string,
  predicate: (message: CapturedMessage) => boolean,
  timeoutMs = 10_000,
): Promise<CapturedMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await readMailbox(dir)).find(predicate);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no captured message matched within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
