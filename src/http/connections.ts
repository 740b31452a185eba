/**
 * Slow or endless clients cannot hold the server (docs/design.md §10): header, request and
 * keep-alive timeouts, and connections answered before their body was read are closed rather
 * than drained.
 */
import type { IncomingMessage, ServerOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { Config } from '../config.ts';

/**
 * How long a connection that is being closed stays open, unread, after its answer: long
 * enough for the client to read the answer before the reset that closing a socket with unread
 * bytes makes the kernel send, short enough that it holds nothing for long.
 */
export const LINGER_MS = 1000;

export type TimeoutOptions = Pick<FastifyServerOptions, 'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout'> & {
  http: ServerOptions;
};

/**
 * Fastify's options for the timeouts. Node's HTTP server enforces the header and request
 * timeouts only when it checks its connections (every 30 s by default), so the check runs
 * often enough that a half-sent request is closed within about a second of its timeout.
 */
export function timeoutOptions(
  config: Pick<Config, 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout'>,
): TimeoutOptions {
  const headersTimeout = config.headersTimeout * 1000;
  const requestTimeout = config.requestTimeout * 1000;
  const keepAliveTimeout = config.keepAliveTimeout * 1000;
  const connectionsCheckingInterval = Math.min(1000, Math.max(100, Math.floor(headersTimeout / 4)));
  return {
    // Node reads headersTimeout and the checking interval only here, at creation; Fastify sets
    // requestTimeout and keepAliveTimeout again from its own options afterwards.
    http: { headersTimeout, requestTimeout, keepAliveTimeout, connectionsCheckingInterval },
    requestTimeout,
    keepAliveTimeout,
    // No inactivity timeout while an answer is being computed: the timeouts above bound what
    // the client controls.
    connectionTimeout: 0,
  };
}

const lingering = new WeakSet<Socket>();

/** Whether closeAfterLinger is closing this socket. */
export function isLingering(socket: Socket): boolean {
  return lingering.has(socket);
}

/**
 * Closes a connection without reading what the client still sends: our side is shut (FIN)
 * once the answer is written, and the socket is destroyed LINGER_MS later (or when it closes
 * by itself). Destroying at once would make the kernel answer the unread bytes with a reset,
 * which can reach the client before it has read the answer.
 */
export function closeAfterLinger(socket: Socket): void {
  if (socket.destroyed || lingering.has(socket)) return;
  lingering.add(socket);
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** Whether the request announced a body that has not been read to its end. */
function bodyUnread(raw: IncomingMessage): boolean {
  if (raw.complete) return false;
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * onSend: an answer sent before the request's body was read (413, 415, a route that takes no
 * body) closes the connection instead of letting Node drain the rest of the body, which a
 * client could make gigabytes long. The answer says `Connection: close`; the request stream
 * stays paused, so the socket stops being read once its small buffer is full; and Node's
 * close after the answer lingers (closeAfterLinger) instead of destroying the socket at once.
 */
export function closeUnreadBodies(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  const raw = request.raw;
  if (bodyUnread(raw)) {
    reply.header('connection', 'close');
    const socket = raw.socket;
    // Node ends a `Connection: close` exchange with socket.destroySoon(): end, then destroy.
    (socket as Socket & { destroySoon(): void }).destroySoon = () => closeAfterLinger(socket);
    // The parser fills a paused request up to its high-water mark and then stops reading the
    // socket. read(0) also tells Node that the body is being consumed, so that it does not
    // resume (drain) the request once the answer is sent.
    raw.pause();
    raw.read(0);
  }
  done(null, payload);
}
