/** /healthz (the process answers), /readyz (the database answers) and /metrics (Prometheus). */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Context } from '../../context.ts';

export async function healthRoutes(app: FastifyInstance, ctx: Context, registry: Registry): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/readyz', async (request, reply) => {
    try {
      await ctx.store.ping();
      return reply.header('cache-control', 'no-store').send({ status: 'ready', database: ctx.store.engine });
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable');
      return reply.code(503).header('cache-control', 'no-store').send({ status: 'unavailable', error: 'temporarily_unavailable', error_description: 'The database is not reachable.' });
    }
  });

  app.get('/metrics', async (_request, reply) => reply.header('content-type', registry.contentType).send(await registry.metrics()));
}
