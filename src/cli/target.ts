/**
 * Where a management command acts: on the database beside the server (DATABASE_URL, as
 * always), or on a remote server through its management API when `--url`/`AGENTAUTH_URL` and
 * `--api-key`/`AGENTAUTH_API_KEY` are given (docs/design.md §15).
 */
import type { Command } from 'commander';
import { withContext } from './common.ts';
import { type LocalOptions, localManagement } from './local.ts';
import type { Management } from './management.ts';
import { type RemoteOptions, remoteManagement, remoteTarget } from './remote.ts';

/**
 * Runs `work` with the management operations of wherever `command` acts.
 *
 * @example
 * const agents = await withManagement(command, (management) => management.listAgents());
 */
export async function withManagement<T>(command: Command, work: (management: Management) => Promise<T>): Promise<T> {
  const options = command.optsWithGlobals<RemoteOptions & LocalOptions>();
  const target = remoteTarget(options);
  if (target && options.adminEmail !== undefined)
    throw new Error("--admin-email chooses the admin on the database; on a remote server the API key's account acts");
  if (target) return work(remoteManagement(target));
  return withContext((ctx) => work(localManagement(ctx, { adminEmail: options.adminEmail })));
}

/** What a command that needs the database says when a remote server is named. */
export const BESIDE_THE_SERVER =
  'run it beside the server (where DATABASE_URL reaches the database), without --url or AGENTAUTH_URL';

/**
 * Refuses, with `why` as its one line, a command that needs the database when a remote server
 * is named (by --url or AGENTAUTH_URL).
 *
 * @example
 * requireDatabase(command, `client reseal re-encrypts the secrets in the database: ${BESIDE_THE_SERVER}`);
 */
export function requireDatabase(command: Command, why: string): void {
  const options = command.optsWithGlobals<RemoteOptions>();
  if (options.url?.trim() || process.env.AGENTAUTH_URL?.trim()) throw new Error(why);
}

/**
 * The options that name a remote server, on the program (they may follow any command).
 *
 * @example
 * remoteOptions(new Command('agentauth'));
 */
export function remoteOptions(program: Command): Command {
  return program
    .option(
      '--url <url>',
      'act on the server at this address through its management API instead of the database (or AGENTAUTH_URL); https, or http to a loopback address (localhost, 127.0.0.0/8, [::1])',
    )
    .option(
      '--api-key <key>',
      'the management API key to act with (or AGENTAUTH_API_KEY, which keeps the key out of the process list)',
    );
}
