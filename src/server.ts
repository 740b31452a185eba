/**
 * Running the server: configuration → store → migrations → secret → app → listen, plus the
 * purge timer and graceful shutdown on SIGTERM/SIGINT.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import { type Clock, type Context, serverSecrets, systemClock } from './context.ts';
import { AuthThrottle } from './domain/throttle.ts';
import { buildApp, type AppOptions } from './http/app.ts';
import { openStore, sqlitePath } from './store/open.ts';
import type { Store } from './store/types.ts';

export interface Warn {
  (message: string): void;
}

/**
 * JWT_SECRET, or in development one generated once and kept next to the SQLite database
 * (mode 0600), so tokens survive restarts. Production refuses to start without one (config.ts).
 */
export function resolveJwtSecret(config: Config, warn: Warn): string {
  if (config.jwtSecret) return config.jwtSecret;
  if (config.databaseUrl.startsWith('sqlite:') && sqlitePath(config.databaseUrl) !== ':memory:') {
    const file = join(dirname(sqlitePath(config.databaseUrl)), 'jwt-secret');
    if (!existsSync(file)) {
      writeFileSync(file, randomBytes(48).toString('base64url'), { mode: 0o600 });
      chmodSync(file, 0o600);
    }
    warn(`JWT_SECRET is not set: using the development secret in ${file}. Set JWT_SECRET (>= 32 bytes) in production.`);
    return readFileSync(file, 'utf8').trim();
  }
  warn('JWT_SECRET is not set: using a random secret for this process only; tokens will not survive a restart.');
  return randomBytes(48).toString('base64url');
}

export async function createContext(config: Config, store: Store, jwtSecret: string, clock: Clock = systemClock): Promise<Context> {
  return { config, store, clock, secrets: serverSecrets(jwtSecret, config.jwtPreviousSecrets, config.baseUrl), throttle: await AuthThrottle.create(config, store) };
}

/** Deletes expired rows, keeping them `purgeAfter` seconds past expiry so expiry stays reportable. */
export async function purgeOnce(ctx: Context) {
  const now = ctx.clock();
  return ctx.store.purge(now - ctx.config.purgeAfter, now - ctx.config.auditRetention);
}

export interface RunningServer {
  app: FastifyInstance;
  ctx: Context;
  url: string;
  close(): Promise<void>;
}

export async function startServer(config: Config, options: AppOptions & { clock?: Clock; store?: Store; warn?: Warn } = {}): Promise<RunningServer> {
  const warn = options.warn ?? ((message: string) => process.stderr.write(`warning: ${message}\n`));
  const store =
    options.store ??
    (await openStore(config.databaseUrl, {
      poolSize: config.databasePoolSize,
      sqliteSynchronous: config.sqliteSynchronous,
      onBackgroundError: (error) => warn(`database connection lost (${error.message}); reconnecting on the next query`),
    }));
  if (config.sqliteSynchronous === 'normal' && store.engine === 'sqlite') {
    warn('SQLITE_SYNCHRONOUS=normal: answers survive a crash of the process, but a power loss may lose the last few seconds of them');
  }
  await store.migrate();
  const ctx = await createContext(config, store, resolveJwtSecret(config, warn), options.clock);
  const app = await buildApp(ctx, options);
  await app.listen({ port: config.port, host: config.host });
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
        await app.close(); // stops accepting, lets in-flight requests finish
        await store.close();
      })();
      return closing;
    },
  };
}
