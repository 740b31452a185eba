import { configDefaults, defineConfig } from 'vitest/config';
import { postgresUnavailableReason } from './test/helpers/postgres-cluster.ts';

/**
 * Every suite runs once per engine, except those that pin SQLite by their nature (they test
 * SQLite itself, the configuration parser, the CLI on a file of its own, or the agent package:
 * its committed dist/ and its installs, which no engine changes) and those that need PostgreSQL
 * itself (several nodes on one database, a database that goes away). A new suite therefore runs
 * on both engines without being listed anywhere.
 */
const SQLITE_ONLY = [
  'test/config.test.ts',
  'test/config-reference.test.ts',
  'test/api-reference.test.ts',
  'test/mcp-tools-reference.test.ts',
  'test/cli.test.ts',
  'test/sqlite-*.test.ts',
  'packages/agent/test/agent-sdk-package.test.ts',
  'packages/agent/test/agent-package-dist.test.ts',
];
const POSTGRES_ONLY = [
  'test/multinode.test.ts',
  'test/multinode-webhooks.test.ts',
  'test/multinode-approvals.test.ts',
  'test/faults/database-outage.test.ts',
];
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
    // passed (3,003 tests) in 862 s against 963 s with one, on the same machine the same morning:
    // the suites' servers, browsers and CLIs already keep both cores busy, so a second worker saves
    // a tenth, not the 40% once measured. Until two such runs pass, CI keeps one worker.
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
                exclude: [...configDefaults.exclude, ...SQLITE_ONLY],
                env: { AGENTAUTH_TEST_ENGINE: 'postgres' },
                globalSetup: ['test/setup/postgres.ts'],
              },
            },
          ]),
    ],
  },
});
