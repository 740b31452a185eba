/**
 * Running the server: configuration → store → migrations → secret → app → listen, plus the
 * purge timer and graceful shutdown on SIGTERM/SIGINT.
 */
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { type Config, ConfigError, MIN_SECRET_BYTES } from './config.ts';
import { type AppOptions, buildApp, type ContextOptions, createContext, startupNotices } from './app.ts';
import type { Context } from './context.ts';
import { buildMetricsApp } from './http/server.ts';
import { openStore, prepareDataDirectory, sqlitePath, warnIfOpenToOthers } from './store/open.ts';
import { inWords } from './store/diagnosis.ts';
import type { Store } from './store/types.ts';

export type Warn = (message: string) => void;

/** The development secret in `file`, validated like JWT_SECRET; undefined when there is no file. */
function readDevelopmentSecret(file: string, warn: Warn): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigError(
      `cannot read the development secret ${file} (${code ?? String(error)}): make it readable by this user, or set JWT_SECRET (at least 32 bytes)`,
    );
  }
  warnIfOpenToOthers(file, 'file', warn);
  const secret = text.trim();
  const bytes = Buffer.byteLength(secret, 'utf8');
  if (bytes < MIN_SECRET_BYTES) {
    throw new ConfigError(
      `the development secret ${file} is ${bytes === 0 ? 'empty' : `only ${bytes} byte(s)`} and must be at least ${MIN_SECRET_BYTES} bytes: set JWT_SECRET (at least ${MIN_SECRET_BYTES} bytes), or delete the file to have a new one generated (tokens and client secrets made with the old one then stop working)`,
    );
  }
  return secret;
}

/**
 * Writes a new development secret to `file` atomically and exclusively: into a temporary file
 * (created 0600, never shared), synced, then hard-linked to its name, which fails if another
 * process got there first. Then that process's secret is used: both end up with the same one,
 * and nobody ever reads a half-written file.
 */
function createDevelopmentSecret(file: string, warn: Warn): string {
  const secret = randomBytes(48).toString('base64url');
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, secret);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return readDevelopmentSecret(file, warn)!;
    throw new ConfigError(
      `cannot create the development secret ${file} (${code ?? String(error)}): set JWT_SECRET (at least 32 bytes)`,
    );
  } finally {
    rmSync(temporary, { force: true });
  }
  // The new name on disk too, so the secret survives a crash right after start.
  const directory = openSync(dirname(file), 'r');
  try {
    fsyncSync(directory);
  } finally {
    closeSync(directory);
  }
  return secret;
}

/**
 * JWT_SECRET, or in development one generated once and kept next to the SQLite database
 * (mode 0600, in a 0700 directory), so tokens survive restarts. Production refuses to start
 * without one (config.ts). A secret file shorter than 32 bytes stops start-up (ConfigError).
 */
export function resolveJwtSecret(config: Config, warn: Warn): string {
  if (config.jwtSecret) return config.jwtSecret;
  if (config.databaseUrl.startsWith('sqlite:') && sqlitePath(config.databaseUrl) !== ':memory:') {
    const directory = dirname(sqlitePath(config.databaseUrl));
    const file = join(directory, 'jwt-secret');
    prepareDataDirectory(directory); // openStore warns about the directory's mode
    const secret = readDevelopmentSecret(file, warn) ?? createDevelopmentSecret(file, warn);
    warn(`JWT_SECRET is not set: using the development secret in ${file}. Set JWT_SECRET (>= 32 bytes) in production.`);
    return secret;
  }
  warn('JWT_SECRET is not set: using a random secret for this process only; tokens will not survive a restart.');
  return randomBytes(48).toString('base64url');
}

/** How long an idempotent creation's answer is kept for its retries (docs/design.md §15): a day. */
const IDEMPOTENCY_RETENTION = 86_400;

/**
 * Deletes expired rows, keeping them `purgeAfter` seconds past expiry so expiry stays reportable,
 * and self-registered clients unused for `selfRegisteredClientRetention` (docs/design.md §9).
 */
export async function purgeOnce(ctx: Context) {
  const now = ctx.clock();
  const auditBefore = now - ctx.config.auditRetention;
  const retention = ctx.config.selfRegisteredClientRetention;
  const unauthenticatedBefore = now - Math.min(ctx.config.purgeUnauthenticatedAfter, ctx.config.purgeAfter);
  const counts = await ctx.store.purge({
    expiredBefore: now - ctx.config.purgeAfter,
    unauthenticatedBefore,
    auditBefore,
    ...(retention > 0 ? { unusedClients: { lastUsedBefore: now - retention, now } } : {}),
  });
  return {
    ...counts,
    console: await ctx.store.accounts.purge(now, auditBefore),
    idempotency: await ctx.store.idempotency.purge(now - IDEMPOTENCY_RETENTION),
    approvals: await ctx.store.approvals.purge(now - ctx.config.purgeAfter),
    // Action requests (docs/design.md §21) as authorization requests: kept PURGE_AFTER past expiry.
    actionRequests: await ctx.store.actionRequests.purge(now - ctx.config.purgeAfter),
    // A rotated refresh token's sealed successor is kept only for REFRESH_TOKEN_REUSE_WINDOW.
    refreshSuccessors: await ctx.store.refreshTokens.forgetSuccessors(now - ctx.config.refreshTokenReuseWindow),
    // A retired signing key once the last token it signed has expired (docs/design.md §19).
    signingKeys: await ctx.store.signingKeys.purge(now),
    // Delivery times are milliseconds; kept WEBHOOK_RETENTION for the delivery log, except the
    // expiries of requests no agent authenticated, which go with their requests.
    webhookDeliveries: await ctx.store.webhooks.purge(
      Date.now() - ctx.config.webhookRetention * 1000,
      unauthenticatedBefore,
    ),
  };
}

/**
 * Milliseconds in-flight requests get at shutdown: SHUTDOWN_TIMEOUT less half a second for
 * closing the database (at least half of SHUTDOWN_TIMEOUT).
 */
export function shutdownGrace(config: Pick<Config, 'shutdownTimeout'>): number {
  return Math.max(config.shutdownTimeout * 1000 - 500, config.shutdownTimeout * 500);
}

export interface RunningServer {
  app: FastifyInstance;
  ctx: Context;
  url: string;
  close(): Promise<void>;
}

export async function startServer(
  config: Config,
  options: AppOptions & ContextOptions & { store?: Store; warn?: Warn } = {},
): Promise<RunningServer> {
  const warn = options.warn ?? ((message: string) => process.stderr.write(`warning: ${message}\n`));
  // What goes wrong opening or migrating the database is said in words, with its remedy
  // (src/store/diagnosis.ts): the same as `agentauth database check` says.
  const store =
    options.store ??
    (await openStore(config.databaseUrl, {
      poolSize: config.databasePoolSize,
      sqliteSynchronous: config.sqliteSynchronous,
      onBackgroundError: (error) => warn(`database connection lost (${error.message}); reconnecting on the next query`),
      warn,
    }).catch((error: unknown) => {
      throw inWords(error, config.databaseUrl);
    }));
  if (config.sqliteSynchronous === 'normal' && store.engine === 'sqlite') {
    warn(
      'SQLITE_SYNCHRONOUS=normal: answers survive a crash of the process, but a power loss may lose the last few seconds of them',
    );
  }
  try {
    await store.migrate();
  } catch (error) {
    if (!options.store) await store.close().catch(() => undefined);
    throw inWords(error, config.databaseUrl);
  }
  const ctx = await createContext(config, store, resolveJwtSecret(config, warn), options);
  // A first key pair, or the switch of TOKEN_SIGNING_ALG, before the node answers (docs/design.md §19).
  await ctx.signingKeys.start();
  for (const notice of await startupNotices(ctx)) warn(notice);
  const registry = new Registry();
  const app = await buildApp(ctx, registry, options);
  // Every node sends webhooks; each delivery is claimed by one of them (docs/design.md §15).
  // Started before listening, so that once the node answers, nothing of its start-up is left.
  ctx.webhooks.onError = (error: unknown) => app.log.warn({ err: error }, 'webhook delivery failed');
  await ctx.webhooks.start();
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await ctx.webhooks.stop();
    throw error;
  }
  // METRICS_PORT: /metrics without a token on a listener of its own (127.0.0.1 by default).
  let metrics: FastifyInstance | undefined;
  if (config.metricsPort !== null) {
    metrics = await buildMetricsApp(ctx, registry, app.log);
    try {
      await metrics.listen({ port: config.metricsPort, host: config.metricsHost });
    } catch (error) {
      await app.close();
      await ctx.webhooks.stop();
      throw error;
    }
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  // Purges run on every node; they are idempotent deletes, so runs of several nodes may
  // overlap. Within a node, a purge that outlasts the interval is not started twice.
  let purging = false;
  const purge = setInterval(() => {
    if (purging) return;
    purging = true;
    purgeOnce(ctx)
      .then((counts) => app.log.debug({ counts }, 'purged expired rows'))
      .catch((error: unknown) => app.log.warn({ err: error }, 'purge failed'))
      .finally(() => {
        purging = false;
      });
  }, config.purgeInterval * 1000);
  purge.unref();

  let closing: Promise<void> | undefined;
  return {
    app,
    ctx,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`,
    close() {
      closing ??= (async () => {
        clearInterval(purge);
        // Stops accepting and lets in-flight requests finish, for at most the grace: then the
        // connections still open (in flight, half-sent, idle) are closed.
        const listeners = metrics ? [app, metrics] : [app];
        const force = setTimeout(() => {
          for (const listener of listeners) listener.server.closeAllConnections();
        }, shutdownGrace(config));
        try {
          await Promise.all(listeners.map((listener) => listener.close()));
        } finally {
          clearTimeout(force);
        }
        await ctx.webhooks.stop();
        await ctx.statusEvents.close();
        await store.close();
      })();
      return closing;
    },
  };
}
