/**
 * The framework's baseline: the least work a Fastify 5 endpoint does here, the way agentauth's
 * routes are built (a logger at agentauth's benchmark level, a query schema and a response
 * schema), answering the body of a pending status check with no storage at all. Beside the raw
 * node:http baseline it shows how much of a request's floor is the framework agentauth chose
 * (docs/design.md §2), before any work of agentauth's own.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: { level: 'warn' } });
app.get(
  '/api/check-status',
  {
    schema: {
      querystring: {
        type: 'object',
        properties: { request_id: { type: 'string', minLength: 1, maxLength: 64 } },
        required: ['request_id'],
      },
      response: { 200: { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } },
    },
  },
  async () => ({ status: 'pending' }),
);
app.get('/', async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });

process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
