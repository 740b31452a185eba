/**
 * `@agentauth/agent/cli`: the commands of `agentauth-agent`, which the server's `agentauth`
 * command registers too (as `agentauth sign-in` and `agentauth mcp`), so both run one code.
 * Exported under the `@agentauth/source` condition only: it is this repository's seam, not a
 * public API; the package's users run the `agentauth-agent` command (dist/cli.js).
 *
 * @packageDocumentation
 */
import { Command } from 'commander';
import { VERSION } from '../index.ts';
import { actionsCommand } from './actions.ts';
import { keygenCommand } from './keys.ts';
import { mcpCommand } from './mcp.ts';
import { signInCommand, withoutSecret } from './sign-in.ts';

export { actionSentence, actionsCommand } from './actions.ts';
export { DEFAULT_KEY_FILE, keygenCommand, keyOptions } from './keys.ts';
export { MCP_HELP, mcpCommand } from './mcp.ts';
export {
  type CommandOptions,
  describeRequest,
  EXIT,
  errorBody,
  exitCodeOf,
  signInCommand,
  signInHelp,
  UsageError,
  withoutSecret,
} from './sign-in.ts';

/** The `agentauth-agent` program: sign-in and mcp, nothing of the server's. */
export function buildAgentCli(): Command {
  const program = new Command('agentauth-agent')
    .description(
      'sign an AI agent in to agentauth sign-in requests: from a shell (sign-in) or as an MCP server (mcp); see what its owner is asked to approve (actions)',
    )
    .version(VERSION, '-V, --version', 'print the version of @agentauth/agent')
    .showHelpAfterError();
  signInCommand(program, { name: 'agentauth-agent' });
  mcpCommand(program);
  keygenCommand(program, 'agentauth-agent');
  actionsCommand(program);
  return program;
}

/** Runs `agentauth-agent` with these arguments (process.argv: node, the script, then the arguments). */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildAgentCli().parseAsync(argv);
  } catch (error) {
    process.stderr.write(withoutSecret(`agentauth-agent: ${error instanceof Error ? error.message : String(error)}\n`));
    process.exit(1);
  }
}
