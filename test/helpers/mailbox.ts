/** A real SMTP server on loopback (smtp-server) that keeps the mail the server sends, for tests to read. */
import { SMTPServer } from 'smtp-server';
import { freePort } from './net.ts';

export interface Mail {
  /** The envelope's recipients. */
  to: string[];
  headers: string;
  /** The body, quoted-printable decoded. */
  text: string;
}

/** An SMTP server on 127.0.0.1 that keeps what it receives, for the test to wait for. */
export async function startMailbox(): Promise<{
  url: string;
  next(): Promise<Mail>;
  received: Mail[];
  close(): Promise<void>;
}> {
  const received: Mail[] = [];
  const waiting: Array<(mail: Mail) => void> = [];
  let taken = 0;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const headers = raw.slice(0, split);
        const body = raw.slice(split + 4);
        const quoted = /content-transfer-encoding:\s*quoted-printable/i.test(headers);
        // Quoted-printable encodes the UTF-8 bytes: decode them to bytes, then read them as UTF-8.
        const text = quoted
          ? Buffer.from(
              body
                .replace(/=\r\n/g, '')
                .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
              'latin1',
            ).toString('utf8')
          : body;
        const mail = { to: session.envelope.rcptTo.map((rcpt) => rcpt.address), headers, text };
        received.push(mail);
        waiting.shift()?.(mail);
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    next() {
      const index = taken++;
      const mail = received[index];
      if (mail) return Promise.resolve(mail);
      return new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => smtp.close(() => resolve())),
  };
}
