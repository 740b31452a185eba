import { defineConfig } from 'vitest/config';
import { postgresUnavailableReason } from './test/helpers/postgres-cluster.ts';

/** Suites that exercise the store through the server: they run once per engine. */
const ENGINE_SUITES = [
  'test/store.test.ts',
  'test/flow.test.ts',
  'test/authorize.test.ts',
  'test/agent-authenticate.test.ts',
  'test/check-status.test.ts',
  'test/continue.test.ts',
  'test/token.test.ts',
  'test/resource-endpoints.test.ts',
  'test/oauth-client.test.ts',
  'test/discovery.test.ts',
  'test/operations.test.ts',
  'test/properties.test.ts',
  'test/security/*.test.ts',
  'test/faults/sigkill.test.ts',
  'test/faults/log-secrets.test.ts',
];
/** Suites that need PostgreSQL itself (several nodes on one database). */
const POSTGRES_ONLY = ['test/multinode.test.ts', 'test/faults/database-outage.test.ts'];

const postgresMissing = postgresUnavailableReason();
// Vitest evaluates this file more than once; say it once.
if (postgresMissing && !process.env.AGENTAUTH_POSTGRES_NOTICE) {
  process.env.AGENTAUTH_POSTGRES_NOTICE = '1';
  console.warn(`\n${postgresMissing}\n`);
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: POSTGRES_ONLY, env: { AGENTAUTH_TEST_ENGINE: 'sqlite' } },
      },
      ...(postgresMissing
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: [...ENGINE_SUITES, ...POSTGRES_ONLY],
                env: { AGENTAUTH_TEST_ENGINE: 'postgres' },
                globalSetup: ['test/setup/postgres.ts'],
              },
            },
          ]),
    ],
  },
});
