/**
 * The HTTP server every feature is mounted on (src/app.ts mounts them): Fastify's options,
 * timeouts, the error shape, headers, metrics, and the METRICS_PORT listener.
 */
import Fastify, {
  type FastifyError,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { collectDefaultMetrics, Counter, Histogram, type Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Context } from '../context.ts';
import { closeUnreadBodies, type TimeoutOptions, timeoutOptions } from './connections.ts';
import { clientErrorHandler, errorHandler, schemaErrorMessage } from './errors.ts';
import { healthRoutes, metricsOnlyRoutes } from './health.ts';
import { lazyRequestLogger, loggerOptions } from './logger.ts';
import { logDestination } from './pretty-log.ts';

export const BODY_LIMIT = 64 * 1024;

export interface AppOptions {
  /** A pino destination stream for the logs (tests capture logs with it). */
  logStream?: NodeJS.WritableStream;
}

/**
 * TRUST_PROXY as Fastify's trustProxy. A number of proxies is a function of the hop: Fastify
 * itself trusts nothing when given a number.
 */
export function fastifyTrustProxy(trust: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  return typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : trust;
}

/** What the main listener and the metrics listener share: timeouts, errors, shutdown. */
function serverOptions(config: Config): FastifyServerOptions & TimeoutOptions {
  return {
    ...timeoutOptions(config),
    return503OnClosing: true,
    // One access-log line per request (answerRecorder below) rather than Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: 'idle',
    clientErrorHandler,
  };
}

/** What the main listener records of each answer: its metrics and its access-log line. */
type AnswerRecorder = (request: FastifyRequest, reply: FastifyReply) => void;

/**
 * The one hook on every answer (each hook is a step of every request, and an onResponse hook
 * a 'finish' listener more): no sniffing and nothing of ours framed; `Connection: close` on
 * early answers to unread bodies and on all answers during shutdown; and `record`, run when
 * the answer is ready to be written.
 */
function addAnswerHook(app: FastifyInstance, record?: AnswerRecorder): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    if (!reply.hasHeader('x-frame-options')) reply.header('x-frame-options', 'DENY');
    if (closing) reply.header('connection', 'close');
    record?.(request, reply);
    closeUnreadBodies(request, reply, payload, done);
  });
}

/**
 * Each answer as a Prometheus histogram (seconds from the request's arrival to its answer being
 * ready, by method, route and status) and, at LOG_LEVEL info or below, one access-log line.
 */
function answerRecorder(app: FastifyInstance, registry: Registry): AnswerRecorder {
  const requests = new Histogram({
    name: 'agentauth_http_request_duration_seconds',
    help: 'HTTP requests by route and status: seconds until the answer was ready',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  // The level is fixed at start, so whether an access-log line is written is decided once.
  const accessLog = ['info', 'debug', 'trace'].includes(app.log.level);
  return (request, reply) => {
    const elapsedMs = reply.elapsedTime;
    requests.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode },
      elapsedMs / 1000,
    );
    if (accessLog)
      request.log.info({ req: request, status: reply.statusCode, ms: Math.round(elapsedMs * 100) / 100 }, 'request');
  };
}

/** The documented error shape for every error, and a JSON 404 for unknown paths. */
function answerErrors(app: FastifyInstance): void {
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: 'not_found', error_description: 'No such endpoint.' });
  });
}

/**
 * Answers an error of the router itself (a malformed or over-long path, before any route runs)
 * as a page, and says so; false leaves it to the JSON error answer.
 */
export type RouterErrorPage = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => boolean;

/**
 * The main listener, with no route yet (src/app.ts mounts the features): timeouts, the error
 * shape, headers, metrics into `registry` (which METRICS_PORT may serve as well) and /health.
 */
export async function createHttpServer(
  ctx: Context,
  registry: Registry,
  options: AppOptions & { routerErrorPage?: RouterErrorPage } = {},
): Promise<FastifyInstance> {
  const stream = logDestination(ctx.config.logFormat, options.logStream);
  const logger =
    ctx.config.logLevel === 'silent' ? false : { ...loggerOptions(ctx.config.logLevel), ...(stream ? { stream } : {}) };
  const app = Fastify({
    ...serverOptions(ctx.config),
    logger,
    ...(logger ? { childLoggerFactory: lazyRequestLogger } : {}),
    bodyLimit: BODY_LIMIT,
    trustProxy: fastifyTrustProxy(ctx.config.trustProxy),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    schemaErrorFormatter: (errors) => new Error(schemaErrorMessage(errors)),
    // A passkey's credential id travels in console paths: up to 1,023 bytes, 1,364 in base64url.
    routerOptions: { maxParamLength: 1400 },
    // Errors of the router (a malformed or over-long path) in the documented shape.
    frameworkErrors: (error, request, reply) => {
      if (!options.routerErrorPage?.(error, request, reply)) errorHandler(error, request, reply);
    },
  });
  collectDefaultMetrics({ register: registry });
  new Counter({
    name: 'agentauth_info',
    help: 'Build and storage information',
    labelNames: ['engine'],
    registers: [registry],
  }).inc({ engine: ctx.store.engine });
  addAnswerHook(app, answerRecorder(app, registry));
  answerErrors(app);

  // No endpoint takes plain text: JSON endpoints answer 415 to anything but JSON (docs/design.md §5).
  app.removeContentTypeParser('text/plain');
  await app.register(async (scope) => healthRoutes(scope, ctx, registry));
  return app;
}

/**
 * The listener of METRICS_PORT: /metrics from `registry` without a token, and nothing else (404
 * in the documented shape), with the same timeouts and error answers as the main listener.
 */
export async function buildMetricsApp(
  ctx: Context,
  registry: Registry,
  log: FastifyBaseLogger,
): Promise<FastifyInstance> {
  const app = Fastify({ ...serverOptions(ctx.config), loggerInstance: log });
  addAnswerHook(app);
  answerErrors(app);
  await app.register(async (scope) => metricsOnlyRoutes(scope, registry));
  return app;
}
