/**
 * A real agentauth server for tests: real HTTP on 127.0.0.1, a real SQLite file in a fresh
 * temporary directory, and a clock the test can move forward.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Context } from '../../src/context.ts';
import { registerAgent, type NewAgent } from '../../src/domain/agents.ts';
import { registerClient, type NewClient } from '../../src/domain/clients.ts';
import type { FetchOptions } from '../../src/domain/client-metadata/index.ts';
import type { DispatcherOptions } from '../../src/domain/webhooks/dispatcher.ts';
import { type RunningServer, startServer } from '../../src/server.ts';
import type { Party } from './flow.ts';
import { freePort } from './net.ts';
import { createDatabase } from './postgres-cluster.ts';

export const TEST_JWT_SECRET = 'test-secret-of-at-least-32-bytes-0123456789';

export interface TestClock {
  (): number;
  advance(seconds: number): void;
}

/** A clock that stands still unless the test moves it, so expiry boundaries are exact. */
export function testClock(): TestClock {
  const start = Math.floor(Date.now() / 1000);
  let offset = 0;
  const clock = (() => start + offset) as TestClock;
  clock.advance = (seconds: number) => {
    offset += seconds;
  };
  return clock;
}

/** The engine the current vitest project runs against (vitest.config.ts). */
export const TEST_ENGINE: 'sqlite' | 'postgres' =
  process.env.AGENTAUTH_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/**
 * A fresh, empty database of the project's engine: a SQLite file in `dir`, or a new database
 * in the run's PostgreSQL cluster. `dispose` removes it.
 */
export async function freshDatabase(dir: string): Promise<{ url: string; dispose(): Promise<void> }> {
  if (TEST_ENGINE === 'sqlite') return { url: `sqlite:${join(dir, 'agentauth.db')}`, dispose: async () => {} };
  const database = await createDatabase(inject('postgresUrl'));
  return { url: database.url, dispose: () => database.drop() };
}

const DEFAULT_REDIRECT_URI = 'http://localhost:8080/callback';
const DEFAULT_OWNER = { ownerEmail: 'ada@example.com', ownerName: 'Ada Lovelace' };

/**
 * A client and an agent registered through a Context, for suites that run the server as a
 * separate process and keep a context of their own on its database.
 */
export async function registerParty(ctx: Context, clientName: string): Promise<Party> {
  const { client, secret: clientSecret } = await registerClient(ctx, {
    name: clientName,
    redirectUris: [DEFAULT_REDIRECT_URI],
  });
  const { agent, secret: agentSecret } = await registerAgent(ctx, DEFAULT_OWNER);
  return { clientId: client.id, clientSecret, redirectUri: DEFAULT_REDIRECT_URI, agentId: agent.id, agentSecret };
}

/** A logStream for startTestServer that keeps every line the server logs, for the test to read. */
export function captureLogs(): { stream: Writable; text(): string } {
  let logs = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  return { stream, text: () => logs };
}

export interface TestServer extends RunningServer {
  baseUrl: string;
  clock: TestClock;
  dir: string;
  /** The DATABASE_URL; pass it to another startTestServer to share the database. */
  databaseUrl: string;
  createClient(
    input?: Omit<Partial<NewClient>, 'public' | 'keys'>,
  ): Promise<{ clientId: string; clientSecret: string; redirectUri: string }>;
  createAgent(input?: Partial<NewAgent>): Promise<{ agentId: string; agentSecret: string }>;
}

/**
 * `host` names the server in BASE_URL (127.0.0.1 by default; WebAuthn needs a domain name, such
 * as localhost, for its relying party). The server always listens on 127.0.0.1.
 */
export async function startTestServer(
  options: {
    env?: Record<string, string>;
    logStream?: NodeJS.WritableStream;
    databaseUrl?: string;
    host?: string;
    clientMetadataFetch?: FetchOptions;
    /** How webhooks are sent (a test CA, loopback receivers, a short retry schedule). */
    webhooks?: DispatcherOptions;
    /** Where start-up warnings go; nowhere by default. */
    warn?: (message: string) => void;
  } = {},
): Promise<TestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-test-'));
  const database = options.databaseUrl
    ? { url: options.databaseUrl, dispose: async () => {} }
    : await freshDatabase(dir);
  const port = await freePort();
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://${options.host ?? '127.0.0.1'}:${port}`,
    DATABASE_URL: database.url,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: 'silent',
    // Suites start hundreds of flows from 127.0.0.1; the suite of the limit sets its own.
    AUTHORIZE_LIMIT_PER_IP: '100000',
    ...options.env,
  });
  const clock = testClock();
  const server = await startServer(config, {
    clock,
    logStream: options.logStream,
    warn: options.warn ?? (() => {}),
    clientMetadataFetch: options.clientMetadataFetch,
    webhooks: options.webhooks,
  });
  return {
    ...server,
    baseUrl: config.baseUrl,
    clock,
    dir,
    databaseUrl: database.url,
    async createClient(input = {}) {
      const redirectUri = input.redirectUris?.[0] ?? DEFAULT_REDIRECT_URI;
      const { client, secret } = await registerClient(server.ctx, {
        name: 'Test App',
        redirectUris: [redirectUri],
        ...input,
        public: false,
        keys: undefined,
      });
      return { clientId: client.id, clientSecret: secret, redirectUri };
    },
    async createAgent(input = {}) {
      const { agent, secret } = await registerAgent(server.ctx, { ...DEFAULT_OWNER, ...input });
      return { agentId: agent.id, agentSecret: secret };
    },
    async close() {
      await server.close();
      await database.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
