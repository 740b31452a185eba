/**
 * Server-Sent Events, as every stream of the server writes them (the status stream of
 * docs/design.md §12, the console's approvals stream of §16): the reply taken over from Fastify,
 * headers no proxy buffers behind, a reconnection delay, comment lines that keep idle
 * connections open, an event written only when its data changed, and an end that runs once.
 */
import type { FastifyReply } from 'fastify';

export interface EventStream {
  /** Writes the event unless its data is the last data written (a re-read that found nothing new). */
  send(event: string, data: string): void;
  /** Ends the response and runs `onEnd`, once, whoever calls it first (the stream, the client, shutdown). */
  end(): void;
  readonly ended: boolean;
}

export interface EventStreamOptions {
  /** The `retry:` the browser's EventSource waits before reconnecting. */
  retryMs: number;
  /** How often a comment line goes out on an idle stream (proxies close silent connections). */
  keepAliveMs: number;
  /** Runs with every keep-alive: a stream whose state can change without a write checks it here. */
  onKeepAlive?: () => void;
  /** Gives back what the stream held (its subscription, its slot). */
  onEnd: () => void;
}

/**
 * Takes the reply over and opens the stream; it ends when the client leaves or `end` is called.
 *
 * @example
 * const stream = openEventStream(reply, { retryMs: 2000, keepAliveMs: 15_000, onEnd: () => stop() });
 * stream.send('status', JSON.stringify({ status: 'pending' }));
 */
export function openEventStream(reply: FastifyReply, options: EventStreamOptions): EventStream {
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    // Proxies that buffer (nginx) would hold the events back.
    'x-accel-buffering': 'no',
  });
  response.write(`retry: ${options.retryMs}\n\n`);
  let last = '';
  let ended = false;
  const keepAlive = setInterval(() => {
    response.write(': keep-alive\n\n');
    options.onKeepAlive?.();
  }, options.keepAliveMs);
  keepAlive.unref();
  const stream: EventStream = {
    send(event, data) {
      if (ended || data === last) return;
      last = data;
      response.write(`event: ${event}\ndata: ${data}\n\n`);
    },
    end() {
      if (ended) return;
      ended = true;
      clearInterval(keepAlive);
      options.onEnd();
      response.end();
    },
    get ended() {
      return ended;
    },
  };
  response.on('close', () => stream.end());
  return stream;
}

/**
 * A re-read that never runs twice at once: a call during a read makes one more read after it
 * (every change heard is seen), however many calls came. A failing read is the caller's to
 * absorb; the next call reads again.
 *
 * @example
 * const reread = oneReadAtATime(async () => stream.send('status', await currentStatus()), () => stream.ended);
 * const stop = await ctx.statusEvents.subscribe(id, reread);
 */
export function oneReadAtATime(read: () => Promise<void>, stopped: () => boolean): () => Promise<void> {
  let reading = false;
  let again = false;
  return async () => {
    if (stopped()) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        await read();
      } while (again && !stopped());
    } finally {
      reading = false;
    }
  };
}
