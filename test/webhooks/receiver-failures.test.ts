/**
 * What the delivery log says when a receiver is not reached (issue 38; docs/reference/webhooks.md,
 * "When a delivery fails"), over real HTTP on both engines: real receivers on loopback, one per
 * failure (a self-signed certificate, one from a CA nobody trusts, one for another name, an
 * expired one, a refused port, a port that takes connections but no TLS, plain HTTP, a receiver
 * that never answers, a name that does not resolve), each sent a test event through the API
 * (Send test event); the log's words, with what fixes it, read the same in the API and on the
 * console's page, and the request sent (its signed headers and body) is shown beside them. The
 * receivers are let through by the real setting, WEBHOOK_ALLOWED_ADDRESSES; the private CA that
 * signed the good one is the test seam's (production: NODE_EXTRA_CA_CERTS).
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { type ConsoleSession, createPasswordAccount, signIn } from '../helpers/console.ts';
import { PRIVATE_CA, type ReceiverCertificate, receiverTls } from '../helpers/https.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
type Call = Awaited<ReturnType<typeof accountWithKey>>['call'];

let server: TestServer;
let call: Call;
let console_: ConsoleSession;
const receivers: Receiver[] = [];
const others: Array<Server | TcpServer> = [];
const sockets = new Set<Socket>();

/** A receiver on loopback with one of the fixtures' certificates; answers 204. */
async function receiverWith(certificate: ReceiverCertificate | 'self-signed'): Promise<Receiver> {
  const receiver = await startWebhookReceiver(certificate === 'self-signed' ? {} : { tls: receiverTls(certificate) });
  receivers.push(receiver);
  return receiver;
}

/** A loopback port something listens on: `serve` decides what (plain HTTP, silence). */
async function listening(make: () => Server | TcpServer): Promise<number> {
  const listener = make();
  listener.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  others.push(listener);
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  return (listener.address() as { port: number }).port;
}

/** A loopback port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  server = await startTestServer({
    // The real setting lets loopback receivers through, at save and at delivery.
    env: { WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32,::1/128' },
    webhooks: {
      fetch: { ca: PRIVATE_CA },
      pollMs: 50,
      timeoutMs: 800,
      // One attempt each: the log's first attempt is what these tests read.
      retryDelaysMs: [3_600_000],
    },
  });
  ({ call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } }));
  const admin = await createPasswordAccount(server.ctx, { email: 'receivers@example.org', role: 'admin' });
  console_ = await signIn(server.baseUrl, admin.email);
});
afterAll(async () => {
  await server.close();
  for (const socket of sockets) socket.destroy();
  await Promise.all([
    ...receivers.map((receiver) => receiver.close()),
    ...others.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))),
  ]);
});

/** HTML as the console escapes text. */
const escaped = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');

interface Sent {
  id: string;
  secret: string;
  messageId: string;
  // biome-ignore lint/suspicious/noExplicitAny: the delivery as the API answers it, read loosely
  delivery: any;
}

/** Registers `url` through the API, sends it a test event, and waits for the first attempt in the log. */
async function testEventTo(url: string): Promise<Sent> {
  const made = await call('POST', '/webhooks', { url, events: ['client.deleted'] });
  expect(made.status, JSON.stringify(made.json)).toBe(201);
  const id = made.json.webhook.id as string;
  const sent = await call('POST', `/webhooks/${id}/test`);
  expect(sent.status).toBe(202);
  // Its status may already have moved on: the dispatcher wakes as soon as it is written.
  expect(sent.json).toMatchObject({ event_type: 'webhook.test', message_id: expect.stringMatching(/^msg_/) });
  const messageId = sent.json.message_id as string;
  const deadline = Date.now() + 8000;
  for (;;) {
    const log = await call('GET', `/webhooks/${id}/deliveries`);
    const delivery = log.json.data.find((d: { message_id: string }) => d.message_id === messageId);
    if (delivery?.attempt_log.length > 0) return { id, secret: made.json.secret, messageId, delivery };
    if (Date.now() > deadline) throw new Error(`no attempt of ${messageId} within 8 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The first attempt's words in the API, and the same words on the console's page. */
async function expectLogged(sent: Sent, words: string | RegExp) {
  const attempt = sent.delivery.attempt_log[0];
  const shown = JSON.stringify(attempt);
  expect(attempt.status_code, shown).toBeNull();
  if (typeof words === 'string') expect(attempt.error, shown).toBe(words);
  else expect(attempt.error, shown).toMatch(words);
  expect(sent.delivery.last_error).toBe(attempt.error);
  const page = await console_.get(`/console/admin/webhooks/${sent.id}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(escaped(attempt.error));
  // Never the secret, in either.
  expect(JSON.stringify(sent.delivery)).not.toContain('whsec_');
  expect(page.text).not.toContain(sent.secret);
}

describe('the delivery log names why a receiver was not reached', () => {
  it('a receiver whose certificate a private CA signed is delivered to once that CA is trusted', async () => {
    const good = await receiverWith('receiver');
    const sent = await testEventTo(good.url);
    expect(sent.delivery.attempt_log[0]).toMatchObject({ status_code: 204, error: null });
    expect(good.received[0]!.payload).toMatchObject({ type: 'webhook.test', data: { webhook: { id: sent.id } } });
  });

  it('a self-signed certificate: NODE_EXTRA_CA_CERTS, or a public CA', async () => {
    const receiver = await receiverWith('self-signed');
    await expectLogged(
      await testEventTo(receiver.url),
      "the receiver's certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT), so this server does not trust it: start agentauth with NODE_EXTRA_CA_CERTS=/path/to/ca.pem (that certificate, or the CA that signed it, in PEM), or give the receiver a certificate from a public CA",
    );
  });

  it('a certificate from a CA this server does not trust: NODE_EXTRA_CA_CERTS', async () => {
    const receiver = await receiverWith('receiver-unknown-ca');
    await expectLogged(
      await testEventTo(receiver.url),
      "the receiver's certificate is not signed by a CA this server trusts (UNABLE_TO_VERIFY_LEAF_SIGNATURE): for a private CA, start agentauth with NODE_EXTRA_CA_CERTS=/path/to/ca.pem (that CA's certificate in PEM); for a public CA, the receiver must send its intermediate certificates too",
    );
  });

  it('a certificate for another name: the names it holds', async () => {
    const receiver = await receiverWith('receiver-wrong-name');
    await expectLogged(
      await testEventTo(receiver.url),
      "the receiver's certificate is not valid for localhost (ERR_TLS_CERT_ALTNAME_INVALID): it names DNS:receiver.example; use a URL with a name the certificate holds, or give the receiver a certificate for localhost",
    );
  });

  it('an expired certificate', async () => {
    const receiver = await receiverWith('receiver-expired');
    await expectLogged(
      await testEventTo(receiver.url),
      "the receiver's certificate has expired (CERT_HAS_EXPIRED): the receiver must renew it",
    );
  });

  it('a refused connection', async () => {
    const port = await closedPort();
    await expectLogged(
      await testEventTo(`https://localhost:${port}/hooks`),
      `the connection to localhost:${port} was refused (ECONNREFUSED): nothing accepts connections there; is the receiver running, on this port?`,
    );
  });

  it('plain HTTP where https was asked for', async () => {
    const port = await listening(() => createHttpServer((_req, res) => res.end('hello')));
    await expectLogged(
      await testEventTo(`https://localhost:${port}/hooks`),
      `localhost:${port} does not answer in TLS (EPROTO): is the receiver plain http? Webhooks are sent over https only`,
    );
  });

  it('a port that takes the connection and says nothing: the TLS handshake timed out', async () => {
    const port = await listening(() => createTcpServer(() => {}));
    await expectLogged(
      await testEventTo(`https://localhost:${port}/hooks`),
      `the TLS handshake with localhost:${port} did not finish within 800 ms: something there accepts connections but does not speak TLS`,
    );
  });

  it('a receiver that takes the request and never answers', async () => {
    const receiver = await receiverWith('receiver');
    receiver.answer('hold');
    const sent = await testEventTo(receiver.url);
    await expectLogged(
      sent,
      `the receiver at ${new URL(receiver.url).host} took the request but did not answer within 800 ms: answer first, then do slow work`,
    );
    expect(receiver.received[0]!.id).toBe(sent.messageId);
  });

  it('a name that does not resolve (accepted when saved: DNS may not have it yet)', async () => {
    // .invalid never resolves (RFC 6761); a resolver that cannot be asked says EAI_AGAIN.
    await expectLogged(
      await testEventTo('https://receiver.invalid/hooks'),
      /^the name receiver\.invalid could not be resolved( just now)? \((ENOTFOUND|EAI_AGAIN|EAI_FAIL|ENODATA)\)/,
    );
  });
});

describe('the request sent, in the delivery log', () => {
  it('shows the signed headers and the body exactly as the receiver got them, in the API and the console', async () => {
    const receiver = await receiverWith('receiver');
    const sent = await testEventTo(receiver.url);
    receiver.useSecret(sent.secret);
    const got = receiver.received[0]!;
    const attempt = sent.delivery.attempt_log[0];
    expect(attempt.request_headers).toEqual({
      'content-type': 'application/json',
      'user-agent': 'agentauth-webhooks',
      'webhook-id': got.headers['webhook-id'],
      'webhook-timestamp': got.headers['webhook-timestamp'],
      'webhook-signature': got.headers['webhook-signature'],
    });
    expect(JSON.stringify(sent.delivery.payload)).toBe(got.raw);
    // The console's detail: the same headers, a blank line, the body.
    const page = await console_.get(`/console/admin/webhooks/${sent.id}`);
    expect(page.text).toContain(`<details class="raw delivery-request" id="request-${sent.messageId}">`);
    expect(page.text).toContain(`webhook-timestamp: ${got.headers['webhook-timestamp']}\n`);
    expect(page.text).toContain(`webhook-signature: ${got.headers['webhook-signature']}\n\n${escaped(got.raw)}`);
    expect(page.text).not.toContain(sent.secret);
  });
});
