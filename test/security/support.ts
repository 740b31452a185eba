/**
 * Shared checks of the adversarial suites (test/security/*.test.ts): the documented error
 * shapes, "no stack trace", raw HTTP over a socket, and small timing helpers.
 */
import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { metaContent } from '../helpers/flow.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * Text that only a leaked stack trace or internal error would contain: stack frames
 * ("    at fn (…)"), source paths ("/src/x.ts:12"), node internals and node_modules.
 * Plain prose such as "64 KiB at most" is not matched.
 */
export const LEAK =
  /\n\s+at |\bat \S+ \(|\.[cm]?[jt]s:\d+|\.ts:|node:internal|node_modules|file:\/\/|ERR_[A-Z_]{3,}|FST_[A-Z_]{3,}|"statusCode"/;

export function expectNoLeak(text: string, context = ''): void {
  expect(text, context).not.toMatch(LEAK);
}

/** Exactly { error, error_description } as JSON, a 4xx, no stack trace. */
export async function expectJsonError(
  response: Response,
  status?: number | number[],
  error?: string,
  context = '',
): Promise<{ error: string; error_description: string }> {
  const text = await response.text();
  const where = `${context} → ${response.status} ${text.slice(0, 300)}`;
  if (status !== undefined) expect(Array.isArray(status) ? status : [status], where).toContain(response.status);
  expect(response.status, where).toBeGreaterThanOrEqual(400);
  expect(response.status, where).toBeLessThan(500);
  expect(response.headers.get('content-type') ?? '', where).toMatch(/^application\/json/);
  expect(response.headers.get('location'), where).toBeNull();
  expectNoLeak(text, where);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort(), where).toEqual(['error', 'error_description']);
  expect(typeof body.error, where).toBe('string');
  expect(typeof body.error_description, where).toBe('string');
  if (error !== undefined) expect(body.error, where).toBe(error);
  return body as { error: string; error_description: string };
}

/** The HTML error page of /authorize and /authorize/continue: 4xx, meta error + description, no redirect, no request id. */
export async function expectErrorPage(
  response: Response,
  status?: number | number[],
  error?: string,
  context = '',
): Promise<{ page: string; error: string; description: string }> {
  const page = await response.text();
  const where = `${context} → ${response.status} ${response.headers.get('content-type')} ${page.slice(0, 300)}`;
  if (status !== undefined) expect(Array.isArray(status) ? status : [status], where).toContain(response.status);
  expect(response.status, where).toBeGreaterThanOrEqual(400);
  expect(response.status, where).toBeLessThan(500);
  expect(response.headers.get('location'), where).toBeNull();
  expect(response.headers.get('content-type') ?? '', where).toMatch(/^text\/html/);
  expectNoLeak(page, where);
  const code = metaContent(page, 'error');
  const description = metaContent(page, 'error-description');
  expect(code, where).toEqual(expect.any(String));
  expect(description, where).toEqual(expect.any(String));
  expect(metaContent(page, 'request-id'), where).toBeUndefined();
  if (error !== undefined) expect(code, where).toBe(error);
  return { page, error: code!, description: description! };
}

export interface RawResponse {
  status: number;
  head: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes over a fresh TCP connection and reads the answer until the server closes it. */
export function rawRequest(server: Pick<TestServer, 'url'>, bytes: Buffer | string): Promise<RawResponse> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      const headers: Record<string, string> = {};
      for (const line of head.split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, headers, body: split < 0 ? '' : text.slice(split + 4) });
    };
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', finish);
    // The server may reset the connection after answering a request it could not parse.
    socket.on('error', (error) => (chunks.length > 0 ? finish() : reject(error)));
    socket.setTimeout(5000, () => {
      socket.destroy();
      finish();
    });
    socket.write(bytes);
  });
}

/** The body of a raw answer that carries Content-Length, or the chunked body decoded. */
export function rawBody(response: RawResponse): string {
  if (!/chunked/i.test(response.headers['transfer-encoding'] ?? '')) return response.body;
  let rest = response.body;
  let out = '';
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, line), 16);
    if (!size) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Every response header whose name starts with access-control- (CORS). */
export function corsHeaders(response: Response | RawResponse): string[] {
  const names = response instanceof Response ? [...response.headers.keys()] : Object.keys(response.headers);
  return names.filter((name) => name.toLowerCase().startsWith('access-control-'));
}

/** Every route of a server with its methods, read from Fastify's own route tree. */
export function routesOf(app: Pick<FastifyInstance, 'printRoutes'>): Array<{ path: string; methods: string[] }> {
  const found: Array<{ path: string; methods: string[] }> = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const level = match[1]!.length / 4;
    stack.length = level;
    const path = (stack[level - 1] ?? '') + match[2]!;
    stack.push(path);
    if (match[3]) found.push({ path, methods: match[3].split(', ') });
  }
  return found;
}

/** The console's POST routes, path parameters written as `x`: a route added later is in the list by itself. */
export function consolePostPaths(app: Pick<FastifyInstance, 'printRoutes'>): string[] {
  return routesOf(app)
    .filter((route) => route.path.startsWith('/console') && route.methods.includes('POST'))
    .map((route) => route.path.replace(/:\w+/g, 'x'));
}
