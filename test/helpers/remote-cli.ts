/**
 * The real `agentauth` command as a child process, on a test server: on its database (as an
 * operator beside it) or remotely through its management API (AGENTAUTH_URL and
 * AGENTAUTH_API_KEY). Remotely, DATABASE_URL names a database that cannot open, which proves
 * the command never reads one. Everything printed is kept, to check that no key ever shows.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { databaseName } from '../../src/store/open.ts';
import { TEST_JWT_SECRET, type TestServer } from './server.ts';

const run = promisify(execFile);

export interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI on `server`: environments for either side, and runs that keep what they printed. */
export function cliOn(server: TestServer) {
  // Vite puts BASE_URL=/ into the test environment; the CLI must not inherit it.
  const base = { ...process.env, BASE_URL: undefined, NODE_ENV: undefined } as NodeJS.ProcessEnv;
  const printed: string[] = [];

  /** Any command in any environment: its exit code and what it printed. */
  async function agentauth(env: NodeJS.ProcessEnv, args: string[]): Promise<Outcome> {
    let outcome: Outcome;
    try {
      const { stdout, stderr } = await run('./bin/agentauth', args, { env });
      outcome = { code: 0, stdout, stderr };
    } catch (error) {
      const failure = error as { code: number; stdout: string; stderr: string };
      outcome = { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
    }
    printed.push(outcome.stdout, outcome.stderr);
    return outcome;
  }

  return {
    /** What every command run so far printed, on both streams. */
    printed: () => printed.join(''),
    agentauth,
    /** The remote side: the server's address and this key (`extra` may unset or change them). */
    remoteEnv: (key: string, extra: Record<string, string> = {}) =>
      ({
        ...base,
        DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none',
        JWT_SECRET: undefined,
        AGENTAUTH_URL: server.baseUrl,
        AGENTAUTH_API_KEY: key,
        ...extra,
      }) as NodeJS.ProcessEnv,
    /** The command beside the server, on its database, as before. */
    localEnv: () =>
      ({
        ...base,
        DATABASE_URL: server.databaseUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        AGENTAUTH_URL: undefined,
        AGENTAUTH_API_KEY: undefined,
      }) as NodeJS.ProcessEnv,
    /**
     * `… --json`, which must succeed with only its one JSON object on stdout; on stderr nothing
     * remotely, and beside the server the one line naming the database it used.
     */
    async json(env: NodeJS.ProcessEnv, args: string[]): Promise<Record<string, unknown>> {
      const { code, stdout, stderr } = await agentauth(env, [...args, '--json']);
      expect(stderr).toBe(env.AGENTAUTH_URL ? '' : `database: ${databaseName(env.DATABASE_URL!)}\n`);
      expect(code).toBe(0);
      return JSON.parse(stdout) as Record<string, unknown>;
    },
    /** A command that must fail with exit code 1: its one line on stderr, after `agentauth: `. */
    async refusal(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
      const { code, stdout, stderr } = await agentauth(env, args);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      // Beside the server, a refusal of the database's own comes after the line naming it.
      const refused = stderr.replace(/^database: [^\n]+\n/, '');
      expect(refused).toMatch(/^agentauth: [^\n]+\n$/);
      return refused.slice('agentauth: '.length, -1);
    },
  };
}

/** A list of records in the order of their ids (`agent_id`, `client_id`, `account_id` or `id`). */
export function byId(list: unknown): Array<Record<string, unknown>> {
  const idOf = (item: Record<string, unknown>) => String(item.agent_id ?? item.client_id ?? item.account_id ?? item.id);
  return [...(list as Array<Record<string, unknown>>)].sort((a, b) => idOf(a).localeCompare(idOf(b)));
}
