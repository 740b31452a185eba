/**
 * The agentauth command line (docs/design.md §7): serve, migrate, and the management of clients,
 * agents, accounts and API keys. It reads the same environment as the server; given --url and
 * --api-key (or AGENTAUTH_URL and AGENTAUTH_API_KEY), the management commands act on a remote
 * server through its management API instead (§15). --json prints one JSON object.
 */
import { keygenCommand, mcpCommand, signInCommand } from '@agentauth/agent/cli';
import { Command } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import { ConfigError } from '../config.ts';
import { accountCommand } from './commands/account.ts';
import { terminalSafe } from './common.ts';
import { agentCommand } from './commands/agent.ts';
import { apiKeyCommand } from './commands/api-key.ts';
import { clientCommand } from './commands/client.ts';
import { databaseCommand } from './commands/database.ts';
import { webhookCommand } from './commands/webhook.ts';
import { signingKeyCommand } from './commands/signing-key.ts';
import { serveCommands } from './commands/serve.ts';
import { remoteOptions } from './target.ts';

/** The program: one file per command group under commands/, registered in the order `--help` lists them. */
export function buildCli(): Command {
  const program = new Command('agentauth')
    .description('OAuth 2.1 / OpenID Connect authorization server for AI agents')
    .version(packageJson.version, '-V, --version', 'print the version of agentauth')
    .showHelpAfterError();
  remoteOptions(program);
  serveCommands(program);
  databaseCommand(program);
  clientCommand(program);
  agentCommand(program);
  accountCommand(program);
  apiKeyCommand(program);
  webhookCommand(program);
  signingKeyCommand(program);
  // The management commands' --help shows the program's --url and --api-key, which they take.
  for (const group of program.commands) showGlobalOptions(group);
  // The agent's commands, as `agentauth-agent` (packages/agent) has them: one code, two names.
  signInCommand(program, { name: 'agentauth' });
  mcpCommand(program);
  keygenCommand(program, 'agentauth');
  return program;
}

function showGlobalOptions(command: Command): void {
  command.configureHelp({ ...command.configureHelp(), showGlobalOptions: true });
  for (const sub of command.commands) showGlobalOptions(sub);
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (error) {
    const known = error instanceof ConfigError || (error instanceof Error && !(error instanceof TypeError));
    process.stderr.write(`agentauth: ${terminalSafe(error instanceof Error ? error.message : String(error))}\n`);
    if (!known) process.stderr.write(`${terminalSafe((error as Error).stack ?? '', { lines: true })}\n`);
    process.exit(1);
  }
}
