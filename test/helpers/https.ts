/**
 * A real HTTPS server on loopback for tests, with the self-signed certificate in
 * test/fixtures/tls (CN localhost; SAN localhost, 127.0.0.1, ::1; test-only key, valid
 * until 2126). Clients trust it by adding `ca` to their trusted CAs.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Socket } from 'node:net';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

/** The test certificate, to pass as an extra trusted CA. */
export const TEST_CA: Buffer = fixture('localhost.crt');
const TEST_KEY: Buffer = fixture('localhost.key');

/**
 * A private CA's certificate (test/fixtures/tls/make-certificates.sh), and receivers' certificates
 * it signed or not: `receiver` (localhost, valid), `receiver-wrong-name` (receiver.example only),
 * `receiver-expired` (2020), `receiver-unknown-ca` (signed by a CA nobody trusts).
 */
export const PRIVATE_CA: Buffer = fixture('private-ca.crt');
export type ReceiverCertificate = 'receiver' | 'receiver-wrong-name' | 'receiver-expired' | 'receiver-unknown-ca';
/** The key and certificate of a receiver signed by the private CA (or not), for startHttpsServer's `tls`. */
export const receiverTls = (name: ReceiverCertificate) => ({
  key: fixture('receiver.key'),
  cert: fixture(`${name}.crt`),
});

export interface HttpsTestServer {
  /** https://localhost:<port> on 127.0.0.1 (https://127.0.0.1:<port> reaches it too), else https://<host>:<port>. */
  origin: string;
  port: number;
  /** The certificate to trust. */
  ca: Buffer;
  /** HTTP requests received so far. */
  readonly requests: number;
  /** Paths (with query) of the requests received, in order. */
  readonly paths: readonly string[];
  /** TCP connections accepted so far, whether or not TLS completed. */
  readonly connections: number;
  /** TCP connections not yet closed. */
  readonly openConnections: number;
  /** Stops listening and destroys open connections (a handler that never answers leaves some). */
  close(): Promise<void>;
}

export type HttpsHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Starts an HTTPS server on 127.0.0.1 (or `host`) on a free port. */
export async function startHttpsServer(
  handler: HttpsHandler,
  options: { host?: string; tls?: { key: Buffer; cert: Buffer } } = {},
): Promise<HttpsTestServer> {
  const host = options.host ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  const paths: string[] = [];
  let connections = 0;
  const server = createServer(options.tls ?? { key: TEST_KEY, cert: TEST_CA }, (req, res) => {
    paths.push(req.url ?? '');
    handler(req, res);
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // A client that hangs up mid-handshake is expected in these tests, not a failure.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    origin:
      host === '127.0.0.1' ? `https://localhost:${port}` : `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    ca: TEST_CA,
    get requests() {
      return paths.length;
    },
    paths,
    get connections() {
      return connections;
    },
    get openConnections() {
      return sockets.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
