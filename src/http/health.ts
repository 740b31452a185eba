/** /healthz (the process answers), /readyz (the database answers) and /metrics (Prometheus, not public). */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Registry } from 'prom-client';
import type { Context } from '../context.ts';
import { digest, safeEqual } from '../crypto.ts';
import { InvalidToken } from '../errors.ts';

export async function healthRoutes(app: FastifyInstance, ctx: Context, registry: Registry): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    try {
      await ctx.store.ping();
      return reply.header('cache-control', 'no-store').send({ status: 'ready', database: ctx.store.engine });
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable');
      return reply.code(503).header('cache-control', 'no-store').send({
        status: 'unavailable',
        error: 'temporarily_unavailable',
        error_description: 'The database is not reachable.',
      });
    }
  });

  // /metrics is not public (docs/design.md §10): on this listener only with METRICS_TOKEN, as a
  // bearer token; without it, 404 like any unknown path. METRICS_PORT serves it separately.
  const token = ctx.config.metricsToken;
  if (token) {
    const expected = digest(token);
    app.get('/metrics', async (request, reply) => {
      const given = /^Bearer +(\S+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
      // Compared as digests, in constant time: neither the token nor its length leaks.
      if (!safeEqual(digest(given), expected))
        throw new InvalidToken('GET /metrics needs Authorization: Bearer with METRICS_TOKEN.');
      return sendMetrics(reply, registry);
    });
  }
}

/** The metrics listener (METRICS_PORT): /metrics without a token, nothing else. */
export async function metricsOnlyRoutes(app: FastifyInstance, registry: Registry): Promise<void> {
  app.get('/metrics', async (_request, reply) => sendMetrics(reply, registry));
}

async function sendMetrics(reply: FastifyReply, registry: Registry): Promise<FastifyReply> {
  return reply
    .header('content-type', registry.contentType)
    .header('cache-control', 'no-store')
    .send(await registry.metrics());
}
