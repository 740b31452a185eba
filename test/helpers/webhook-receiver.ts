/**
 * A webhook receiver for tests: a real HTTPS server on loopback (test/fixtures/tls) that verifies
 * every delivery with the Standard Webhooks reference library, as a user's receiver would, and
 * keeps what it received. Its answer can be changed (fail, then succeed).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { startHttpsServer } from './https.ts';

export interface Received {
  id: string;
  timestamp: string;
  headers: IncomingHttpHeaders;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads payloads loosely, asserting what it needs
  payload: any;
  /** Whether Webhook.verify accepted it with the secret the receiver holds. */
  verified: boolean;
  at: number;
  /** What the receiver answered; null while it holds the request unanswered. */
  status: number | null;
}

/** Loopback allowed for test receivers at both checks (before connecting and on the socket). */
export const allowLoopback = (ip: string) => ip === '127.0.0.1' || ip === '::1' || ip === '::ffff:127.0.0.1';

export async function startWebhookReceiver(options: { host?: string; tls?: { key: Buffer; cert: Buffer } } = {}) {
  let secret: string | null = null;
  let status: number | 'hold' = 204;
  const received: Received[] = [];
  /** Requests held unanswered whose connection is still open. */
  let open = 0;
  const waiters: Array<() => void> = [];
  const server = await startHttpsServer(
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let verified = false;
        try {
          if (secret) new Webhook(secret).verify(raw, req.headers as Record<string, string>);
          verified = secret !== null;
        } catch {
          verified = false;
        }
        received.push({
          id: String(req.headers['webhook-id']),
          timestamp: String(req.headers['webhook-timestamp']),
          headers: req.headers,
          raw,
          payload: JSON.parse(raw),
          verified,
          at: Date.now(),
          status: status === 'hold' ? null : status,
        });
        if (status !== 'hold') res.writeHead(status).end();
        else {
          open += 1;
          res.once('close', () => {
            open -= 1;
          });
        }
        for (const wake of waiters.splice(0)) wake();
      });
    },
    { host: options.host, tls: options.tls },
  );
  const url = `https://localhost:${server.port}/hooks`;
  return {
    url,
    ca: server.ca,
    received,
    /** The secret to verify with (the one the webhook was made or rotated with). */
    useSecret(value: string) {
      secret = value;
    },
    /** What the receiver answers from now on; 'hold': nothing, the request stays open. */
    answer(code: number | 'hold') {
      status = code;
    },
    /** How many requests it holds unanswered on connections still open. */
    get open() {
      return open;
    },
    /** Waits until `predicate` holds over what was received, or `ms` pass (then throws). */
    async until(predicate: (all: Received[]) => boolean, ms = 5000): Promise<Received[]> {
      const deadline = Date.now() + ms;
      while (!predicate(received)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the receiver did not get what was expected within ${ms} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 200));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received;
    },
    close: () => server.close(),
  };
}
