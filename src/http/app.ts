/** Builds the Fastify application for a Context: routes, error shape, headers and metrics. */
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { Context } from '../context.ts';
import { clientErrorHandler, errorHandler, schemaErrorMessage } from './errors.ts';
import { loggerOptions } from './logger.ts';
import { agentRoutes } from './routes/agent.ts';
import { authorizeRoutes } from './routes/authorize.ts';
import { discoveryRoutes } from './routes/discovery.ts';
import { healthRoutes } from './routes/health.ts';
import { tokenRoutes } from './routes/token.ts';
import { userinfoRoutes } from './routes/userinfo.ts';

export const BODY_LIMIT = 64 * 1024;

export interface AppOptions {
  /** A pino destination stream for the logs (tests capture logs with it). */
  logStream?: NodeJS.WritableStream;
}

export async function buildApp(ctx: Context, options: AppOptions = {}): Promise<FastifyInstance> {
  const logger = ctx.config.logLevel === 'silent' ? false : { ...loggerOptions(ctx.config.logLevel), ...(options.logStream ? { stream: options.logStream } : {}) };
  const app = Fastify({
    logger,
    bodyLimit: BODY_LIMIT,
    trustProxy: ctx.config.trustProxy,
    return503OnClosing: true,
    // One access-log line per request (onResponse below) rather than Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: 'idle',
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    schemaErrorFormatter: (errors) => new Error(schemaErrorMessage(errors)),
    clientErrorHandler,
  });

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Histogram({
    name: 'agentauth_http_request_duration_seconds',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  new Counter({ name: 'agentauth_info', help: 'Build and storage information', labelNames: ['engine'], registers: [registry] }).inc({ engine: ctx.store.engine });
  // Hooks on every request are plain functions: an async one costs a promise per request.
  // The level is fixed at start, so whether an access-log line is written is decided once.
  const accessLog = ['info', 'debug', 'trace'].includes(app.log.level);
  app.addHook('onResponse', (request, reply, done) => {
    requests.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode }, reply.elapsedTime / 1000);
    if (accessLog) request.log.info({ req: request, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
    done();
  });

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: 'not_found', error_description: 'No such endpoint.' });
  });
  // Every JSON answer: no sniffing, and nothing of ours may be framed.
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
    done(null, payload);
  });

  // No endpoint takes plain text: JSON endpoints answer 415 to anything but JSON (DESIGN.md §5).
  app.removeContentTypeParser('text/plain');
  await app.register(authorizeRoutes, ctx);
  await app.register(agentRoutes, ctx);
  await app.register(tokenRoutes, ctx);
  await app.register(userinfoRoutes, ctx);
  await app.register(discoveryRoutes, ctx);
  await app.register(async (scope) => healthRoutes(scope, ctx, registry));
  return app;
}
