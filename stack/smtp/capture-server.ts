/**
 * A real SMTP server over TCP that keeps every message it receives as an .eml file (plus a JSON envelope)
 * in a capture directory, where tests and the demo read them. It plays the part Mailpit plays in the
 * compose stack.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { SMTPServer } from 'smtp-server';

function arg(name: string): string {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? process.argv[index + 1] : undefined;
  if (!value) {
    process.stderr.write(`capture-server: missing --${name}\n`);
    process.exit(2);
  }
  return value;
}

const host = arg('host');
const port = Number(arg('port'));
const dir = arg('dir');
fs.mkdirSync(dir, { recursive: true });

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  banner: 'lethe capture',
  size: 10 * 1024 * 1024,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const id = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}`;
      const envelope = {
        id,
        receivedAt: new Date().toISOString(),
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
        to: session.envelope.rcptTo.map((r) => r.address),
      };
      // Write the body first and the envelope last: a reader treats the .json as "message complete".
      fs.writeFileSync(path.join(dir, `${id}.eml`), Buffer.concat(chunks));
      fs.writeFileSync(path.join(dir, `${id}.json.tmp`), JSON.stringify(envelope));
      fs.renameSync(path.join(dir, `${id}.json.tmp`), path.join(dir, `${id}.json`));
      callback();
    });
  },
});

server.on('error', (error) => process.stderr.write(`capture-server: ${error.message}\n`));
server.listen(port, host, () => process.stdout.write(`capture-server listening on ${host}:${port}, dir ${dir}\n`));

const shutdown = () => server.close(() => process.exit(0));
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
