import { configDefaults, defineConfig } from 'vitest/config';
import { postgresUnavailableReason } from './test/helpers/postgres-cluster.ts';
import { runOnce } from './test/setup/engines.ts';

/**
 * A suite runs once per engine (projects sqlite and postgres) if the engine can reach it, and
 * once, on SQLite, if not. The two projects differ only in AGENTAUTH_TEST_ENGINE and the
 * `postgresUrl` the postgres project provides; a suite none of whose modules reads either (it
 * starts no server and opens no test database: test/helpers/server.ts reads both) would run the
 * same code twice. test/setup/engines.ts follows each suite's imports to decide, so nobody lists
 * these suites, and a new suite that starts a server runs on both engines by default.
 *
 * A suite that starts a server but checks nothing the engine can change (the layout of pages)
 * says so in its header, `@engine-independent` and why, and runs once too. When in doubt it does
 * not: clients that wait on push (the JavaScript SDK, `agentauth sign-in`) stay on both, since push
 * is LISTEN/NOTIFY on PostgreSQL and once failed there alone (test/cli-sign-in.test.ts); a second
 * client of the same stream (the Python SDK) and the CLI on a remote server (a client of the
 * management API, which test/api/ runs on both) run once.
 *
 * Besides, some suites pin SQLite by their nature although a server's engine reaches them (SQLite
 * itself, the CLI on a file of its own, the agent package's installs, which no engine changes),
 * and some need PostgreSQL itself (several nodes on one database, a database that goes away; the
 * container image, run on SQLite and on PostgreSQL by one suite).
 */
const SQLITE_ONLY = [
  'test/cli.test.ts',
  'test/cli-database.test.ts',
  'test/sqlite-*.test.ts',
  'packages/agent/test/agent-sdk-package.test.ts',
];
/** Paths, not patterns: the suites run once are kept out of the postgres project unless listed here. */
const POSTGRES_ONLY = [
  'test/multinode.test.ts',
  'test/multinode-webhooks.test.ts',
  'test/multinode-approvals.test.ts',
  'test/multinode-signing.test.ts',
  'test/action-requests/multinode.test.ts',
  'test/faults/database-outage.test.ts',
  'test/container.test.ts',
  'test/database-check.test.ts',
];
const ONCE = runOnce(import.meta.dirname).filter((suite) => !POSTGRES_ONLY.includes(suite));
/** The server's suites, and the agent SDK's beside it (packages/agent/test; never its node_modules or dist). */
const INCLUDE = ['test/**/*.test.ts', 'packages/agent/test/**/*.test.ts'];

const postgresMissing = postgresUnavailableReason();
// Vitest evaluates this file more than once; say it once.
if (postgresMissing && !process.env.AGENTAUTH_POSTGRES_NOTICE) {
  process.env.AGENTAUTH_POSTGRES_NOTICE = '1';
  console.warn(`\n${postgresMissing}\n`);
}

export default defineConfig({
  // @agentauth/agent (the workspace packages/agent) from its TypeScript source, with no build. The
  // suites run in Vite's ssr environment, whose conditions these are; Vite adds its defaults
  // (node, development), and Vitest passes the list to the workers' node as --conditions.
  ssr: { resolve: { conditions: ['@agentauth/source'] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One suite at a time (the default on two cores). Two at a time once took 8 minutes instead of
    // 13, but test/sqlite-busy.test.ts then failed one run in three: its reader, a SqliteDriver in
    // the test process, reused a read transaction opened before the server's commit (fixed: it
    // reads through a plain connection). A later run with two workers had the postgres project's
    // test/cli-sign-in.test.ts time out in 'a denial exits 8': the status stream dropped a change
    // heard while it read the first status (fixed). With both fixes a full run with two workers
    // passed (3,003 tests, before the engine-free suites ran once) in 862 s against 963 s with one,
    // on the same machine the same morning: the suites' servers, browsers and CLIs already keep both
    // cores busy, so a second worker saves a tenth, not the 40% once measured. Until two such runs
    // pass, CI keeps one worker.
    maxWorkers: 1,
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: INCLUDE,
          exclude: [...configDefaults.exclude, ...POSTGRES_ONLY],
          env: { AGENTAUTH_TEST_ENGINE: 'sqlite' },
        },
      },
      ...(postgresMissing
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: INCLUDE,
                exclude: [...configDefaults.exclude, ...SQLITE_ONLY, ...ONCE],
                env: { AGENTAUTH_TEST_ENGINE: 'postgres' },
                globalSetup: ['test/setup/postgres.ts'],
              },
            },
          ]),
    ],
  },
});
