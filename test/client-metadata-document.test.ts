/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document-02): the URL
 * rules, the document rules, the fetcher against a real HTTPS server on loopback (redirects,
 * status, content type, size, deadline, special-use addresses, one reason for every failure to
 * reach a server) and the resolver's cache.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  clientIdUrlProblem,
  isClientIdUrl,
  validateClientMetadataDocument,
} from '../src/domain/client-metadata/document.ts';
import { fetchJsonDocument } from '../src/domain/client-metadata/fetch.ts';
import { ClientMetadataDocuments, type ClientMetadataDocumentsOptions } from '../src/domain/client-metadata/index.ts';
import type { AddressStage } from '../src/outbound/request.ts';
import { isSpecialUseAddress } from '../src/outbound/special-use.ts';
import { InvalidClient } from '../src/errors.ts';
import { authorizeUrl, pkcePair } from './helpers/flow.ts';
import { type HttpsHandler, type HttpsTestServer, startHttpsServer, TEST_CA } from './helpers/https.ts';
import { freePort } from './helpers/net.ts';
import { startTestServer } from './helpers/server.ts';
import { expectErrorPage } from './security/support.ts';

const LOOPBACK = (ip: string) => ip === '127.0.0.1' || ip === '::1';
/** What a test needs to fetch from its loopback server; production passes neither. */
const FETCH = { ca: TEST_CA, allowAddress: LOOPBACK };

const servers: HttpsTestServer[] = [];
const tcpServers: TcpTestServer[] = [];
afterEach(async () => {
  await Promise.all([...servers.splice(0), ...tcpServers.splice(0)].map((server) => server.close()));
});

async function serve(handler: HttpsHandler): Promise<HttpsTestServer> {
  const server = await startHttpsServer(handler);
  servers.push(server);
  return server;
}

interface TcpTestServer {
  port: number;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** Bytes received on all of them. */
  readonly received: number;
  readonly peers: readonly Socket[];
  close(): Promise<void>;
}

/** A plain TCP listener on `host` (no TLS, no HTTP), doing `onConnection` with each socket. */
async function listenTcp(host: string, onConnection: (socket: Socket) => void = () => {}): Promise<TcpTestServer> {
  const peers: Socket[] = [];
  let received = 0;
  const tcp = createTcpServer((socket) => {
    peers.push(socket);
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('error', () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => tcp.listen(0, host, resolve));
  const server: TcpTestServer = {
    port: (tcp.address() as { port: number }).port,
    get connections() {
      return peers.length;
    },
    get received() {
      return received;
    },
    peers,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of peers) socket.destroy();
        tcp.close(() => resolve());
      }),
  };
  tcpServers.push(server);
  return server;
}

/** Lets a connection that is under way (it should not be) reach the listener before counting. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

/** The URL a request was sent to, which a valid document names as its client_id. */
const requestUrl = (req: IncomingMessage) => `https://${req.headers.host}${req.url}`;

function documentFor(clientId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: 'Example App',
    redirect_uris: ['https://app.example/callback'],
    ...overrides,
  };
}

function sendJson(res: ServerResponse, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** A server answering every path with a valid document for that path, with `headers`. */
const serveDocuments = (headers: Record<string, string> = {}) =>
  serve((req, res) => sendJson(res, documentFor(requestUrl(req)), headers));

/** The InvalidClient (400) a resolve rejected with. */
async function refusal(promise: Promise<unknown>): Promise<InvalidClient> {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal, but it resolved');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(InvalidClient);
  expect(error).toMatchObject({ error: 'invalid_client', statusCode: 400 });
  return error as InvalidClient;
}

function resolver(options: ClientMetadataDocumentsOptions = {}) {
  return new ClientMetadataDocuments({ fetch: FETCH, ...options });
}

describe('isSpecialUseAddress', () => {
  it.each([
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '100.127.255.255',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '192.88.99.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
    '::FFFF:7f00:1',
    '0:0:0:0:0:ffff:a00:1',
    '::ffff:169.254.169.254',
    '::ffff:192.168.0.1',
    '::127.0.0.1',
    '64:ff9b::808:808',
    '64:ff9b:1::1',
    '100::1',
    '2001::1',
    '2001:1ff::1',
    '2001:db8::1',
    '2002:c000:201::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    'febf::1',
    'ff02::1',
    'fe80::1%eth0',
    'not-an-ip',
    '',
    'localhost',
  ])('%s is special-use', (ip) => {
    expect(isSpecialUseAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.1',
    '172.15.255.255',
    '172.32.0.0',
    '192.169.0.1',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '2001:200::1',
    '2a00:1450:4001::1',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
  ])('%s is not special-use', (ip) => {
    expect(isSpecialUseAddress(ip)).toBe(false);
  });
});

describe('clientIdUrlProblem', () => {
  it.each([
    'https://app.example/oauth/client.json',
    'https://app.example:8443/client',
    'https://app.example/a/b.json',
    'https://app.example/%7Eapp/client',
    // Loopback and special-use hosts are the fetcher's to refuse, at the address actually reached.
    'https://127.0.0.1:8443/client',
  ])('%s is acceptable', (url) => {
    expect(clientIdUrlProblem(url)).toBeNull();
  });

  it.each([
    ['http://app.example/client', /https/],
    ['HTTPS://app.example/client', /https/],
    ['app.example/client', /https/],
    ['https://app.example', /path/],
    ['https://app.example/', /path/],
    ['https://app.example/client#top', /fragment/],
    ['https://user:pass@app.example/client', /user information/],
    ['https://@app.example/client', /user information/],
    ['https://app.example/a/../client', /\. or \.\. path segments/],
    ['https://app.example/./client', /\. or \.\. path segments/],
    ['https://app.example/%2e%2E/client', /\. or \.\. path segments/],
    ['https://app.example/a/%2E', /\. or \.\. path segments/],
    ['https://app.example/client?version=2', /query/],
    [`https://app.example/${'a'.repeat(500)}`, /longer than 512/],
    ['https://app.example/my client', /URL characters/],
    ['https://app.example/clïent', /URL characters/],
    ['https://app.example/a\\client', /URL characters/],
    ['https://app.example/"client"', /URL characters/],
    ['https://app.example/%zzclient', /percent-encoding/],
    ['https:///client', /not a valid URL/],
  ])('%s is refused', (url, reason) => {
    expect(clientIdUrlProblem(url)).toMatch(reason);
  });

  it('isClientIdUrl is the https:// prefix', () => {
    expect(isClientIdUrl('https://app.example/client')).toBe(true);
    expect(isClientIdUrl('cl_8f3a')).toBe(false);
    expect(isClientIdUrl('http://app.example/client')).toBe(false);
  });
});

describe('validateClientMetadataDocument', () => {
  const url = 'https://app.example/oauth/client.json';
  const refused = (body: unknown) => expect(() => validateClientMetadataDocument(url, body));

  it('returns what the server uses: name trimmed, redirect URIs deduplicated, valid links kept, the rest dropped', () => {
    const client = validateClientMetadataDocument(
      url,
      documentFor(url, {
        client_name: '  Example App ',
        redirect_uris: ['https://app.example/callback', 'http://127.0.0.1:8123/cb', 'https://app.example/callback'],
        client_uri: 'https://app.example/',
        logo_uri: 'https://app.example/logo.png',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        scope: 'openid profile',
        software_id: 'whatever',
      }),
    );
    expect(client).toEqual({
      client_id: url,
      client_name: 'Example App',
      redirect_uris: ['https://app.example/callback', 'http://127.0.0.1:8123/cb'],
      client_uri: 'https://app.example/',
      logo_uri: 'https://app.example/logo.png',
      token_endpoint_auth_method: 'none',
    });
  });

  it('drops a client_uri or logo_uri that is not a plain https URL', () => {
    const client = validateClientMetadataDocument(
      url,
      documentFor(url, { client_uri: 'javascript:alert(1)', logo_uri: 'http://app.example/logo.png' }),
    );
    expect(client).not.toHaveProperty('client_uri');
    expect(client).not.toHaveProperty('logo_uri');
  });

  it('refuses anything but a JSON object', () => {
    for (const body of [null, [], 'text', 42]) refused(body).toThrow(/not a JSON object/);
  });

  it('refuses a client_id that is missing or not exactly the URL (a trailing slash counts)', () => {
    refused({ client_name: 'x', redirect_uris: ['https://app.example/cb'] }).toThrow(/client_id is missing/);
    refused(documentFor(`${url}/`)).toThrow(/client_id is not exactly the URL/);
    refused(documentFor('https://app.example/oauth/other.json')).toThrow(/client_id is not exactly the URL/);
    refused(documentFor('https://APP.example/oauth/client.json')).toThrow(/client_id is not exactly the URL/);
    expect(() =>
      validateClientMetadataDocument('https://app.example/client/', documentFor('https://app.example/client')),
    ).toThrow(/client_id/);
  });

  it('refuses a missing, empty, long or deceptive client_name', () => {
    refused({ client_id: url, redirect_uris: ['https://app.example/cb'] }).toThrow(/client_name is missing/);
    refused(documentFor(url, { client_name: '   ' })).toThrow(/client_name is missing/);
    refused(documentFor(url, { client_name: 42 })).toThrow(/client_name is missing/);
    refused(documentFor(url, { client_name: 'x'.repeat(201) })).toThrow(/longer than 200/);
    refused(documentFor(url, { client_name: 'Bell\u0007' })).toThrow(/control/);
    refused(documentFor(url, { client_name: 'Example \u202eppA' })).toThrow(/text-direction/);
    expect(
      validateClientMetadataDocument(url, documentFor(url, { client_name: 'é'.repeat(200) })).client_name,
    ).toHaveLength(200);
  });

  it('refuses missing, empty, too many or unacceptable redirect_uris', () => {
    refused({ client_id: url, client_name: 'x' }).toThrow(/redirect_uris must be a non-empty array/);
    refused(documentFor(url, { redirect_uris: [] })).toThrow(/redirect_uris must be a non-empty array/);
    refused(documentFor(url, { redirect_uris: 'https://app.example/cb' })).toThrow(
      /redirect_uris must be a non-empty array/,
    );
    refused(documentFor(url, { redirect_uris: [42] })).toThrow(/redirect_uris must be a non-empty array/);
    const eleven = Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`);
    refused(documentFor(url, { redirect_uris: eleven })).toThrow(/more than 10/);
    refused(documentFor(url, { redirect_uris: ['https://app.example/cb', 'http://evil.example/cb'] })).toThrow(
      /redirect_uris\[1\] must use https/,
    );
    refused(documentFor(url, { redirect_uris: ['https://app.example/cb#x'] })).toThrow(
      /redirect_uris\[0\] must not contain a fragment/,
    );
  });

  it('refuses shared-secret authentication and any method but none', () => {
    for (const method of ['client_secret_post', 'client_secret_basic', 'client_secret_jwt']) {
      refused(documentFor(url, { token_endpoint_auth_method: method })).toThrow(
        new RegExp(`${method} needs a shared secret`),
      );
    }
    refused(documentFor(url, { token_endpoint_auth_method: 'private_key_jwt' })).toThrow(
      /private_key_jwt is not enabled on this server \(PRIVATE_KEY_JWT\), and the document does not offer none/,
    );
    refused(documentFor(url, { token_endpoint_auth_method: null })).toThrow(/must be none or private_key_jwt/);
    refused(documentFor(url, { token_endpoint_auth_method: 'tls_client_auth' })).toThrow(
      /must be none or private_key_jwt/,
    );
  });

  it('serves private_key_jwt with PRIVATE_KEY_JWT; without it, as public only when none is offered too', () => {
    const jwksUri = 'https://app.example/jwks.json';
    const declared = documentFor(url, { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: jwksUri });
    expect(validateClientMetadataDocument(url, declared, { privateKeyJwt: true })).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: jwksUri,
    });
    const offersNone = { ...declared, token_endpoint_auth_methods_supported: ['none', 'private_key_jwt'] };
    // The declared method is the one the client uses: with the feature on it signs, whatever else it offers.
    expect(validateClientMetadataDocument(url, offersNone, { privateKeyJwt: true }).token_endpoint_auth_method).toBe(
      'private_key_jwt',
    );
    const publicClient = validateClientMetadataDocument(url, offersNone, { privateKeyJwt: false });
    expect(publicClient.token_endpoint_auth_method).toBe('none');
    expect(publicClient).not.toHaveProperty('jwks_uri');
    const refusedWith = (body: unknown) => () => validateClientMetadataDocument(url, body, { privateKeyJwt: true });
    expect(refusedWith({ ...declared, jwks_uri: undefined })).toThrow(/exactly one of jwks and jwks_uri/);
    expect(refusedWith({ ...declared, jwks: { keys: [] } })).toThrow(/exactly one of jwks and jwks_uri/);
    expect(refusedWith({ ...declared, jwks_uri: 'http://app.example/jwks.json' })).toThrow(
      /jwks_uri must be an https URL/,
    );
    expect(refusedWith({ ...declared, token_endpoint_auth_methods_supported: 'none' })).toThrow(
      /token_endpoint_auth_methods_supported must be an array/,
    );
  });

  it('refuses client_secret, client_secret_expires_at and private key material', () => {
    refused(documentFor(url, { client_secret: 'hunter2' })).toThrow(/must not contain client_secret/);
    refused(documentFor(url, { client_secret_expires_at: 0 })).toThrow(/must not contain client_secret/);
    const privateKey = { kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'private' };
    refused(documentFor(url, { jwks: { keys: [privateKey] } })).toThrow(/private or symmetric key/);
    refused(documentFor(url, { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } })).toThrow(/private or symmetric key/);
  });

  it('refuses grant types beyond authorization_code and refresh_token, and response types beyond code', () => {
    refused(documentFor(url, { grant_types: ['authorization_code', 'client_credentials'] })).toThrow(
      /only authorization_code and refresh_token/,
    );
    refused(documentFor(url, { grant_types: ['refresh_token'] })).toThrow(/must include authorization_code/);
    refused(documentFor(url, { grant_types: 'authorization_code' })).toThrow(/grant_types/);
    refused(documentFor(url, { response_types: ['token'] })).toThrow(/response_types must be \["code"\]/);
    refused(documentFor(url, { response_types: ['code', 'token'] })).toThrow(/response_types/);
  });
});

describe('fetching a document over HTTPS', () => {
  it('resolves a valid document and returns its fields', async () => {
    const server = await serve((req, res) => {
      expect(req.headers.accept).toBe('application/json');
      sendJson(res, documentFor(requestUrl(req), { client_uri: 'https://app.example/' }), {
        'content-type': 'application/json; charset=utf-8',
      });
    });
    const url = `${server.origin}/oauth/client.json`;
    await expect(resolver().resolve(url)).resolves.toEqual({
      client_id: url,
      client_name: 'Example App',
      redirect_uris: ['https://app.example/callback'],
      client_uri: 'https://app.example/',
      token_endpoint_auth_method: 'none',
    });
    expect(server.paths).toEqual(['/oauth/client.json']);
  });

  it('accepts a +json media type', async () => {
    const server = await serve((req, res) =>
      sendJson(res, documentFor(requestUrl(req)), { 'content-type': 'application/client-metadata+json' }),
    );
    await expect(resolver().resolve(`${server.origin}/client`)).resolves.toMatchObject({ client_name: 'Example App' });
  });

  it('does not follow a redirect: refused, and the target is never requested', async () => {
    const target = await serveDocuments();
    const server = await serve((_req, res) => {
      res.writeHead(302, { location: `${target.origin}/client` });
      res.end();
    });
    const error = await refusal(resolver().resolve(`${server.origin}/client`));
    expect(error.description).toMatch(/redirect \(HTTP 302\), which is not followed/);
    expect(server.requests).toBe(1);
    expect(target.requests).toBe(0);
  });

  it.each([404, 500, 204])('refuses HTTP %i', async (status) => {
    const server = await serve((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 204 ? undefined : '{}');
    });
    const error = await refusal(resolver().resolve(`${server.origin}/client`));
    expect(error.description).toBe(
      `the client's metadata document at localhost:${server.port} could not be fetched: the server answered HTTP ${status} instead of 200`,
    );
  });

  it('refuses a response that is not JSON by its content type, or by its content', async () => {
    const html = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(JSON.stringify(documentFor(requestUrl(req))));
    });
    expect((await refusal(resolver().resolve(`${html.origin}/client`))).description).toMatch(
      /not JSON \(its content type must be application\/json\)/,
    );
    const untyped = await serve((req, res) => {
      res.writeHead(200);
      res.end(JSON.stringify(documentFor(requestUrl(req))));
    });
    expect((await refusal(resolver().resolve(`${untyped.origin}/client`))).description).toMatch(/not JSON/);
    const broken = await serve((_req, res) => sendJson(res, '{"client_id": "https://'));
    expect((await refusal(resolver().resolve(`${broken.origin}/client`))).description).toMatch(/not valid JSON/);
  });

  it('refuses a document that fetches fine but is invalid, saying why', async () => {
    const server = await serve((req, res) => sendJson(res, documentFor(`${requestUrl(req)}/`)));
    const error = await refusal(resolver().resolve(`${server.origin}/client`));
    expect(error.description).toBe(
      "the client's metadata document is invalid: client_id is not exactly the URL the document was fetched from",
    );
  });

  describe('size limit (5 KiB)', () => {
    /** A valid document of exactly `bytes` bytes. */
    function documentOfSize(clientId: string, bytes: number): string {
      const padding = bytes - JSON.stringify(documentFor(clientId, { padding: '' })).length;
      const body = JSON.stringify(documentFor(clientId, { padding: 'x'.repeat(padding) }));
      expect(Buffer.byteLength(body)).toBe(bytes);
      return body;
    }

    it('accepts exactly 5120 bytes and refuses 5121', async () => {
      const server = await serve((req, res) =>
        sendJson(res, documentOfSize(requestUrl(req), req.url === '/big' ? 5121 : 5120)),
      );
      await expect(resolver().resolve(`${server.origin}/fits`)).resolves.toMatchObject({ client_name: 'Example App' });
      const error = await refusal(resolver().resolve(`${server.origin}/big`));
      expect(error.description).toMatch(/larger than 5120 bytes/);
    });

    it('refuses a Content-Length over the limit without waiting for the body', async () => {
      const server = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5121' });
        res.flushHeaders();
      });
      const started = Date.now();
      const error = await refusal(
        resolver({ fetch: { ...FETCH, timeoutMs: 10_000 } }).resolve(`${server.origin}/client`),
      );
      expect(error.description).toMatch(/larger than 5120 bytes/);
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('refuses a chunked body without Content-Length as soon as it passes the limit', async () => {
      const server = await serve((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const body = documentOfSize(requestUrl(req), 8000);
        // 1 KiB at a time, then the response is left open: only the size cap can end this quickly.
        for (let at = 0; at < 6144; at += 1024) res.write(body.slice(at, at + 1024));
      });
      const started = Date.now();
      const error = await refusal(
        resolver({ fetch: { ...FETCH, timeoutMs: 10_000 } }).resolve(`${server.origin}/client`),
      );
      expect(error.description).toMatch(/larger than 5120 bytes/);
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });

  describe('deadline', () => {
    it('refuses a server that never answers, within timeoutMs, and drops the connection', async () => {
      const server = await serve(() => {});
      const started = Date.now();
      const error = await refusal(resolver({ fetch: { ...FETCH, timeoutMs: 300 } }).resolve(`${server.origin}/client`));
      // No response at all: the reason of every failure to reach the server, whatever its cause.
      expect(error.description).toMatch(/the server could not be reached over HTTPS$/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(server.requests).toBe(1);
      await vi.waitFor(() => expect(server.openConnections).toBe(0));
    });

    it('refuses a body that trickles past the deadline', async () => {
      const server = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"client_id":');
        const drip = setInterval(() => res.write(' '), 50);
        res.on('close', () => clearInterval(drip));
      });
      const error = await refusal(resolver({ fetch: { ...FETCH, timeoutMs: 300 } }).resolve(`${server.origin}/client`));
      expect(error.description).toMatch(/within 300 ms/);
      await vi.waitFor(() => expect(server.openConnections).toBe(0));
    });
  });

  describe('special-use addresses (SSRF)', () => {
    const trustOnly = { ca: TEST_CA };

    it('refuses an IP-literal loopback host: the server receives no request', async () => {
      const server = await serveDocuments();
      const error = await refusal(resolver({ fetch: trustOnly }).resolve(`https://127.0.0.1:${server.port}/client`));
      expect(error.description).toBe(
        `the client's metadata document at 127.0.0.1:${server.port} could not be fetched: the host is at a special-use IP address, which is never fetched from`,
      );
      expect(server.requests).toBe(0);
    });

    it('refuses a host name that resolves to loopback before connecting: no request, no connection', async () => {
      const server = await serveDocuments();
      const error = await refusal(resolver({ fetch: trustOnly }).resolve(`${server.origin}/client`));
      expect(error.description).toMatch(/special-use IP address/);
      expect(server.requests).toBe(0);
      expect(server.connections).toBe(0);
    });

    it('checks the connected socket: a DNS answer that passed (as after rebinding) does not get a request through', async () => {
      const server = await serveDocuments();
      const asked: AddressStage[] = [];
      // The DNS check lets loopback through, as it would let through a public first answer of a
      // rebinding name; only the check of the socket's peer can still stop the request.
      const allowAddress = (_ip: string, stage: AddressStage) => {
        asked.push(stage);
        return stage === 'resolved';
      };
      const error = await refusal(
        resolver({ fetch: { ca: TEST_CA, allowAddress } }).resolve(`${server.origin}/client`),
      );
      expect(error.description).toMatch(/special-use IP address/);
      expect(asked).toContain('resolved');
      expect(asked.at(-1)).toBe('connected');
      expect(server.connections).toBe(1);
      expect(server.requests).toBe(0);
    });

    // Before this rule an IP literal was connected to and refused on the socket only: the SYN
    // went out, and whether it was answered told an open port from a closed one (issue 19).
    it.each([
      ['127.0.0.1', '127.0.0.1'],
      ['127.0.0.1', '0x7f.1'],
      ['127.0.0.1', '[::ffff:127.0.0.1]'],
      ['::1', '[::1]'],
    ])(
      'an IP-literal special-use host is refused before any socket is opened (listening on %s, URL host %s)',
      async (listenOn, urlHost) => {
        const tcp = await listenTcp(listenOn);
        const asked: AddressStage[] = [];
        const allowAddress = (_ip: string, stage: AddressStage) => {
          asked.push(stage);
          return false;
        };
        await expect(fetchJsonDocument(`https://${urlHost}:${tcp.port}/client`, { allowAddress })).rejects.toThrow(
          /special-use IP address/,
        );
        expect(asked).toEqual(['resolved']);
        await settle();
        expect(tcp.connections).toBe(0);
      },
    );

    it('the socket check stays for an IP literal: let through before connecting, it is refused on the socket and not one byte (not even a TLS hello) is sent', async () => {
      const tcp = await listenTcp('127.0.0.1');
      const asked: AddressStage[] = [];
      const allowAddress = (_ip: string, stage: AddressStage) => {
        asked.push(stage);
        return stage === 'resolved';
      };
      await expect(fetchJsonDocument(`https://127.0.0.1:${tcp.port}/client`, { allowAddress })).rejects.toThrow(
        /special-use IP address/,
      );
      expect(asked).toEqual(['resolved', 'connected']);
      await vi.waitFor(() => expect(tcp.connections === 1 && tcp.peers[0]!.closed).toBe(true));
      expect(tcp.received).toBe(0);
    });

    it('at /authorize in production: an IP-literal client_id (IPv4 or IPv6 loopback) gets the special-use page, and nothing connects to it', async () => {
      const v4 = await listenTcp('127.0.0.1');
      const v6 = await listenTcp('::1');
      const server = await startTestServer({ env: { MCP_AUTHORIZATION: 'true' } });
      try {
        for (const clientId of [`https://127.0.0.1:${v4.port}/client.json`, `https://[::1]:${v6.port}/client.json`]) {
          const authorize = authorizeUrl(server, {
            client_id: clientId,
            redirect_uri: 'http://127.0.0.1/callback',
            response_type: 'code',
            state: 's',
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
          });
          const { description } = await expectErrorPage(await fetch(authorize), 400, 'invalid_client');
          expect(description).toMatch(
            /could not be fetched: the host is at a special-use IP address, which is never fetched from$/,
          );
        }
        await settle();
        expect(v4.connections).toBe(0);
        expect(v6.connections).toBe(0);
      } finally {
        await server.close();
      }
    });
  });

  describe('one reason for every failure to reach the server (no port scanning through client_ids)', () => {
    const UNREACHABLE = 'the server could not be reached over HTTPS';
    /** The reason of a failed fetch, without the "at <host>" that names the URL. */
    async function reason(url: string, options = {}): Promise<string> {
      const error = await fetchJsonDocument(url, { ...FETCH, timeoutMs: 500, ...options }).then(
        () => new Error('expected a failure, but the fetch succeeded'),
        (failure: unknown) => failure as Error,
      );
      return error.message.replace(/^the client's metadata document at \S+ could not be fetched: /, '');
    }

    it('closed, resetting, silent, not speaking TLS, untrusted TLS, unresolvable: all the same text', async () => {
      const closed = await freePort();
      const resets = await listenTcp('127.0.0.1', (socket) => socket.resetAndDestroy());
      const silent = await listenTcp('127.0.0.1');
      const ssh = await listenTcp('127.0.0.1', (socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n'));
      const plainHttp = await listenTcp('127.0.0.1', (socket) =>
        socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n')),
      );
      const untrusted = await serveDocuments();
      const reasons = {
        closed: await reason(`https://127.0.0.1:${closed}/client`),
        resets: await reason(`https://127.0.0.1:${resets.port}/client`),
        silent: await reason(`https://127.0.0.1:${silent.port}/client`),
        ssh: await reason(`https://127.0.0.1:${ssh.port}/client`),
        plainHttp: await reason(`https://127.0.0.1:${plainHttp.port}/client`),
        untrusted: await reason(`${untrusted.origin}/client`, { ca: undefined }),
        unresolvable: await reason('https://no-such-host.invalid/client'),
      };
      expect(reasons).toEqual({
        closed: UNREACHABLE,
        resets: UNREACHABLE,
        silent: UNREACHABLE,
        ssh: UNREACHABLE,
        plainHttp: UNREACHABLE,
        untrusted: UNREACHABLE,
        unresolvable: UNREACHABLE,
      });
      expect(resets.connections + silent.connections + ssh.connections + plainHttp.connections).toBe(4);
    });

    it('and so at /authorize: the page for a closed port reads as the page for an open one that is not an HTTPS server', async () => {
      const closed = await freePort();
      const open = await listenTcp('127.0.0.1', (socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n'));
      const server = await startTestServer({ env: { MCP_AUTHORIZATION: 'true' }, clientMetadataFetch: FETCH });
      try {
        const page = async (port: number) => {
          const clientId = `https://127.0.0.1:${port}/client.json`;
          const authorize = authorizeUrl(server, {
            client_id: clientId,
            redirect_uri: 'http://127.0.0.1/callback',
            response_type: 'code',
            state: 's',
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
          });
          const { description } = await expectErrorPage(await fetch(authorize), 400, 'invalid_client');
          return description.replace(String(port), 'PORT');
        };
        const [closedPage, openPage] = [await page(closed), await page(open.port)];
        expect(closedPage).toBe(openPage);
        expect(closedPage).toMatch(/could not be fetched: the server could not be reached over HTTPS$/);
        expect(open.connections).toBe(1);
      } finally {
        await server.close();
      }
    });
  });

  it('refuses a certificate that is not trusted, and a URL that is not https', async () => {
    const server = await serveDocuments();
    const error = await refusal(resolver({ fetch: { allowAddress: LOOPBACK } }).resolve(`${server.origin}/client`));
    expect(error.description).toMatch(/could not be fetched: the server could not be reached over HTTPS$/);
    await expect(fetchJsonDocument(`http://localhost:${server.port}/client`, FETCH)).rejects.toThrow(
      /only https URLs are fetched/,
    );
  });

  it('refuses a bad client_id URL without fetching anything', async () => {
    const server = await serveDocuments();
    const error = await refusal(resolver().resolve(`${server.origin}/client?v=2`));
    expect(error.description).toBe('client_id must not contain a query');
    expect(server.requests).toBe(0);
  });
});

describe('caching', () => {
  let now = Date.parse('2030-01-01T00:00:00Z');
  const clock = () => now;
  const advance = (seconds: number) => {
    now += seconds * 1000;
  };

  it('keeps a document for its max-age, then fetches it again', async () => {
    const server = await serveDocuments({ 'cache-control': 'public, max-age=120' });
    const documents = resolver({ clock });
    const url = `${server.origin}/client`;
    await documents.resolve(url);
    await documents.resolve(url);
    expect(server.requests).toBe(1);
    advance(119);
    await documents.resolve(url);
    expect(server.requests).toBe(1);
    advance(2);
    await documents.resolve(url);
    expect(server.requests).toBe(2);
  });

  it.each(['max-age=0', 'no-store', 'no-cache', 'max-age=nonsense'])(
    '%s is kept for minCacheSeconds (60) anyway',
    async (cacheControl) => {
      const server = await serveDocuments({ 'cache-control': cacheControl });
      const documents = resolver({ clock });
      const url = `${server.origin}/client`;
      await documents.resolve(url);
      advance(59);
      await documents.resolve(url);
      expect(server.requests).toBe(1);
      advance(2);
      await documents.resolve(url);
      expect(server.requests).toBe(2);
    },
  );

  it('max-age=10^9 is kept for maxCacheSeconds (86400) only', async () => {
    const server = await serveDocuments({ 'cache-control': 'max-age=1000000000' });
    const documents = resolver({ clock });
    const url = `${server.origin}/client`;
    await documents.resolve(url);
    advance(86_399);
    await documents.resolve(url);
    expect(server.requests).toBe(1);
    advance(2);
    await documents.resolve(url);
    expect(server.requests).toBe(2);
  });

  it('without cache headers keeps a document for defaultCacheSeconds; the bounds are configurable', async () => {
    const server = await serveDocuments();
    const documents = resolver({ clock, defaultCacheSeconds: 30, minCacheSeconds: 10 });
    const url = `${server.origin}/client`;
    await documents.resolve(url);
    advance(29);
    await documents.resolve(url);
    expect(server.requests).toBe(1);
    advance(2);
    await documents.resolve(url);
    expect(server.requests).toBe(2);
  });

  it('falls back to Expires minus Date, and takes Age off', async () => {
    const date = new Date();
    const expires = new Date(date.getTime() + 600_000);
    const byExpires = await serveDocuments({ date: date.toUTCString(), expires: expires.toUTCString() });
    const aged = await serveDocuments({ 'cache-control': 'max-age=300', age: '200' });
    const documents = resolver({ clock });
    await documents.resolve(`${byExpires.origin}/client`);
    await documents.resolve(`${aged.origin}/client`);
    advance(99);
    await documents.resolve(`${aged.origin}/client`);
    expect(aged.requests).toBe(1);
    advance(2);
    await documents.resolve(`${aged.origin}/client`);
    expect(aged.requests).toBe(2);
    advance(497); // 598 s
    await documents.resolve(`${byExpires.origin}/client`);
    expect(byExpires.requests).toBe(1);
    advance(3);
    await documents.resolve(`${byExpires.origin}/client`);
    expect(byExpires.requests).toBe(2);
  });

  it('never caches a failure: a failed fetch or an invalid document, then success', async () => {
    let answer = 0;
    const server = await serve((req, res) => {
      answer += 1;
      if (answer === 1) {
        res.writeHead(500);
        res.end();
      } else if (answer === 2)
        sendJson(res, documentFor(requestUrl(req), { redirect_uris: [] }), { 'cache-control': 'max-age=3600' });
      else sendJson(res, documentFor(requestUrl(req)), { 'cache-control': 'max-age=3600' });
    });
    const documents = resolver({ clock });
    const url = `${server.origin}/client`;
    expect((await refusal(documents.resolve(url))).description).toMatch(/HTTP 500/);
    expect((await refusal(documents.resolve(url))).description).toMatch(/redirect_uris/);
    await expect(documents.resolve(url)).resolves.toMatchObject({ client_id: url });
    await documents.resolve(url);
    expect(server.requests).toBe(3);
  });

  it('shares one fetch among concurrent resolves of one URL, success or failure', async () => {
    let fail = false;
    const server = await serve((req, res) => {
      setTimeout(() => {
        if (fail) {
          res.writeHead(404);
          res.end();
        } else sendJson(res, documentFor(requestUrl(req)));
      }, 50);
    });
    const documents = resolver({ clock });
    const url = `${server.origin}/client`;
    const results = await Promise.all(Array.from({ length: 10 }, () => documents.resolve(url)));
    expect(server.requests).toBe(1);
    expect(new Set(results.map((result) => result.client_id))).toEqual(new Set([url]));

    fail = true;
    const other = `${server.origin}/other`;
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => documents.resolve(other)));
    expect(outcomes.every((outcome) => outcome.status === 'rejected')).toBe(true);
    expect(server.requests).toBe(2);
  });

  it('keeps at most maxEntries documents, dropping the least recently used', async () => {
    const server = await serveDocuments({ 'cache-control': 'max-age=3600' });
    const documents = resolver({ clock, maxEntries: 2 });
    const [a, b, c] = ['/a', '/b', '/c'].map((path) => `${server.origin}${path}`) as [string, string, string];
    await documents.resolve(a);
    await documents.resolve(b);
    await documents.resolve(c); // a goes
    await documents.resolve(b);
    await documents.resolve(c);
    expect(server.paths).toEqual(['/a', '/b', '/c']);
    await documents.resolve(a); // fetched again; b, the least recently used, goes
    expect(server.paths).toEqual(['/a', '/b', '/c', '/a']);
    await documents.resolve(c);
    await documents.resolve(b);
    expect(server.paths).toEqual(['/a', '/b', '/c', '/a', '/b']);
  });

  it('forget() drops a cached document', async () => {
    const server = await serveDocuments({ 'cache-control': 'max-age=3600' });
    const documents = resolver({ clock });
    const url = `${server.origin}/client`;
    await documents.resolve(url);
    documents.forget(url);
    await documents.resolve(url);
    expect(server.requests).toBe(2);
  });
});
