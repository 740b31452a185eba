/**
 * GET /api/check-status/events (docs/design.md §12): the status of GET /api/check-status as
 * Server-Sent Events, so that the authorization page and waiting agents learn of a change
 * without polling. The first event is the status now; then one event per change; the stream
 * ends after a final status (completed or error, expiry included). Nothing is read from the
 * database while nothing changes, except once when the request expires. Streams are limited
 * per client address (429) and per node (503), so that they cannot take the descriptors
 * everything else needs (§12 "Flooding").
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Context } from '../../context.ts';
import { type StatusView, statusView } from '../../domain/authorization-request/status.ts';
import { ConcurrencyLimit } from '../../throttle/address.ts';
import { NotFound, TemporarilyUnavailable, TooManyRequests } from '../../errors.ts';
import type { RequestStatusFields } from '../../store/requests.ts';
import { oneReadAtATime, openEventStream } from '../../http/event-stream.ts';
import { Token } from '../../http/schemas.ts';

const StatusQuery = Type.Object({ request_id: Token(128) });

/** A comment line this often keeps proxies from closing an idle stream, and notices gone clients. */
export const KEEP_ALIVE_MS = 15_000;
/** What EventSource waits before it reconnects after a dropped stream. */
const RETRY_MS = 2000;
/** Retry-After of a refused stream; the page and the SDKs poll meanwhile. */
const REFUSED_RETRY_AFTER = 5;

const isFinal = (view: StatusView) => view.status === 'completed' || view.status === 'error';

export async function statusStreamRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const open = new Set<() => void>();
  const { statusStreamsPerIp, statusStreamsMax } = ctx.config;
  /**
   * Streams per client address (429 past it) and on this node (503 past it: each is a
   * descriptor, and past the cap nothing else could connect). A slot is taken before the open's
   * first await, and an open being set up holds it as a stream does. The address's limit is
   * checked first: a client past its own share is told so rather than that the node is full,
   * and a proxy that retries 503s elsewhere does not carry its extra streams there.
   */
  const streams = new ConcurrencyLimit({
    perAddress: statusStreamsPerIp,
    node: statusStreamsMax,
    // Past either limit the page polls instead (its EventSource fails; polling costs a read a second).
    addressFull: () =>
      new TooManyRequests(
        `At most ${statusStreamsPerIp} status streams may be open from one address; poll GET /api/check-status instead.`,
        REFUSED_RETRY_AFTER,
      ),
    nodeFull: () =>
      new TemporarilyUnavailable(
        'This server holds as many status streams as it can; poll GET /api/check-status instead.',
        REFUSED_RETRY_AFTER,
      ),
  });
  // A shutdown ends the streams (EventSource reconnects to another node) instead of waiting for them.
  app.addHook('preClose', (done) => {
    for (const end of [...open]) end();
    done();
  });

  app.get<{ Querystring: Static<typeof StatusQuery> }>(
    '/api/check-status/events',
    { schema: { querystring: StatusQuery } },
    async (request, reply) => {
      const id = request.query.request_id;
      const release = streams.take(request.ip);
      // Until the stream has them, the slots and the subscription are this handler's to give back.
      let stop: (() => void) | undefined;
      let streaming = false;
      try {
        // Listen first, then read: a change between the two is heard, not lost. One heard before
        // the stream is set up (during the read, whose answer may predate it) is read again then.
        let heardEarly = false;
        let changed = () => {
          heardEarly = true;
        };
        stop = await ctx.statusEvents.subscribe(id, () => changed());
        const found = await ctx.store.requests.findStatus(id);
        if (!found) throw new NotFound('The authorization request does not exist.');
        if (reply.raw.destroyed) {
          // The client left while we waited: its socket's 'close' is past, so no stream would ever end.
          reply.hijack();
          return;
        }
        const unsubscribe = stop;
        stream(
          reply,
          id,
          found,
          () => {
            unsubscribe();
            release();
          },
          (onChange) => {
            changed = onChange;
            if (heardEarly) onChange();
          },
        );
        streaming = true;
      } finally {
        if (!streaming) {
          stop?.();
          release();
        }
      }
    },
  );

  /** Takes the connection over and writes events until the status is final or the client leaves. */
  function stream(
    reply: FastifyReply,
    id: string,
    first: RequestStatusFields,
    stop: () => void,
    onChange: (handler: () => void) => void,
  ): void {
    let expiresAt = first.expires_at;
    const events = openEventStream(reply, {
      retryMs: RETRY_MS,
      keepAliveMs: KEEP_ALIVE_MS,
      // Expiry changes the status without a write anybody could announce.
      onKeepAlive: () => {
        if (ctx.clock() >= expiresAt) void reread();
      },
      onEnd: () => {
        stop();
        clearTimeout(expiry);
        open.delete(end);
      },
    });
    const end = () => events.end();
    const send = (fields: RequestStatusFields) => {
      expiresAt = fields.expires_at;
      const view = statusView(fields, ctx.clock());
      events.send('status', JSON.stringify(view));
      if (isFinal(view)) end();
    };
    const reread = oneReadAtATime(
      async () => {
        try {
          const fields = await ctx.store.requests.findStatus(id);
          if (events.ended) return;
          if (!fields) return end(); // purged: nothing more will happen
          send(fields);
        } catch {
          // The database is away for now: the stream stays, and the next change or tick reads again.
        }
      },
      () => events.ended,
    );
    const expiry = setTimeout(() => void reread(), Math.max(0, (first.expires_at - ctx.clock()) * 1000 + 100));
    expiry.unref();
    open.add(end);
    onChange(() => void reread());
    send(first);
  }
}
