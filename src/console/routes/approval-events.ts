/**
 * GET /console/approvals/events (docs/design.md §16): the count of sign-ins waiting for the
 * signed-in account's decision as Server-Sent Events, so that the navigation's badge, the
 * approvals list and the notices on the overview and an agent's page change without a reload.
 * The store announces every approval change on every node ('approvals' on the status channel);
 * each stream then reads its account's count once. An approval's expiry changes the count
 * without a write, so the stream also reads again when the first pending one expires.
 *
 * Same-origin only (the session cookie is SameSite=Lax and no CORS header is sent), a session
 * required, at most a few streams per session (429 past it) and the node's status-stream cap
 * (503); a stream ends after STREAM_LIFETIME, and EventSource's reconnection checks the session
 * again. console.js refreshes periodically when the stream fails.
 */
import type { FastifyInstance } from 'fastify';
import { APPROVALS_CHANGED } from '../../store/approvals.ts';
import { TemporarilyUnavailable, TooManyRequests } from '../../errors.ts';
import { oneReadAtATime, openEventStream } from '../../http/event-stream.ts';
import { ConcurrencyLimit } from '../../throttle/address.ts';
import { approvalsVersion, pendingApprovals } from '../approvals.ts';
import type { ConsoleScope } from './scope.ts';

/** Streams one console session may hold at once (a few tabs); more answer 429. */
export const STREAMS_PER_SESSION = 4;
/** A stream ends after this long; EventSource reconnects, and the session is checked again. */
const STREAM_LIFETIME_MS = 10 * 60_000;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEP_ALIVE_MS = 15_000;
const RETRY_MS = 2000;
const REFUSED_RETRY_AFTER = 30;

export function approvalEventRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx } = area;
  const open = new Set<() => void>();
  // Keyed by the session's id: a person's tabs share a session, and a session is one person.
  const streams = new ConcurrencyLimit({
    perAddress: STREAMS_PER_SESSION,
    node: ctx.config.statusStreamsMax,
    addressFull: () =>
      new TooManyRequests(
        `At most ${STREAMS_PER_SESSION} approval streams may be open per session; the page refreshes by itself instead.`,
        REFUSED_RETRY_AFTER,
      ),
    nodeFull: () =>
      new TemporarilyUnavailable(
        'This server holds as many streams as it can; the page refreshes by itself instead.',
        REFUSED_RETRY_AFTER,
      ),
  });
  scope.addHook('preClose', (done) => {
    for (const end of [...open]) end();
    done();
  });

  scope.get('/approvals/events', async (request, reply) => {
    const account = area.account(request);
    const release = streams.take(`session:${request.signedIn!.session.id}`);
    let stop: (() => void) | undefined;
    let streaming = false;
    try {
      let changed = () => {};
      // Listen first, then read: a change between the two is heard, not lost.
      stop = await ctx.statusEvents.subscribe(APPROVALS_CHANGED, () => changed());
      if (reply.raw.destroyed) {
        reply.hijack();
        return;
      }
      const unsubscribe = stop;
      let expiry: NodeJS.Timeout | undefined;
      let lifetime: NodeJS.Timeout | undefined;
      const events = openEventStream(reply, {
        retryMs: RETRY_MS,
        keepAliveMs: KEEP_ALIVE_MS,
        onEnd: () => {
          unsubscribe();
          release();
          clearTimeout(lifetime);
          clearTimeout(expiry);
          open.delete(end);
        },
      });
      const end = () => events.end();
      const reread = oneReadAtATime(
        async () => {
          try {
            const pending = await pendingApprovals(ctx, account);
            if (events.ended) return;
            events.send('approvals', JSON.stringify({ pending: pending.length, version: approvalsVersion(pending) }));
            // An expiry changes the count without a write: read again when the first one expires.
            clearTimeout(expiry);
            const first = Math.min(...pending.map((approval) => approval.expires_at));
            if (Number.isFinite(first)) {
              expiry = setTimeout(() => void reread(), Math.max(0, (first - ctx.clock()) * 1000 + 500));
              expiry.unref();
            }
          } catch {
            // The database is away for now: the next change reads again.
          }
        },
        () => events.ended,
      );
      lifetime = setTimeout(end, STREAM_LIFETIME_MS);
      lifetime.unref();
      open.add(end);
      changed = () => void reread();
      streaming = true;
      await reread();
    } finally {
      if (!streaming) {
        stop?.();
        release();
      }
    }
  });
}
