/**
 * The `mcp` command of `agentauth-agent` (and of the server's `agentauth`): its options and help.
 * The server itself (mcp-server.ts) is loaded only when the command runs, so `sign-in` and
 * `--version` start without the MCP SDK.
 */
import type { Command } from 'commander';

/** What `mcp --help` says after the options. */
export const MCP_HELP = `
Environment (never tool arguments; the secret is never in a tool result nor on stderr):
  AGENTAUTH_ISSUER, AGENTAUTH_AGENT_ID, AGENTAUTH_AGENT_SECRET, AGENTAUTH_MODEL
  AGENTAUTH_AGENT_KEY_FILE (or --key-file): a key-bound agent's private key file, from
  agentauth-agent keygen, instead of AGENTAUTH_AGENT_SECRET

Tools:
  inspect_sign_in_request {request_id}                                 what the request is for
  sign_in {request_id, expected_host?, expected_client_id?, expected_resource?}
                                                                       refused without an expectation
  wait_for_sign_in {request_id, timeout_seconds?}                      until the browser has continued
  list_actions {}                                                      what websites ask the owner to approve
  wait_for_action {action_id, timeout_seconds?}                        until the owner decides one

Results carry structuredContent (each tool has an outputSchema) and the same JSON as text.
Errors are tool results with isError and {"error", "error_description"} as text. What a
website says of itself (its name, its client_id) is shown quoted and labelled as unverified.

Plain http is accepted only for this machine (localhost, 127.x.x.x, [::1]) unless
--allow-insecure-http is given here, in the host's configuration (never by a tool).

An MCP client's configuration, for instance (with @agentauth/agent installed in the project
or globally; docs/guides/mcp-hosts.md has each host's form):
  {"mcpServers": {"agentauth": {"command": "npx", "args": ["--no-install", "agentauth-agent", "mcp"],
    "env": {"AGENTAUTH_ISSUER": "https://auth.example.com", "AGENTAUTH_AGENT_ID": "agt_…",
            "AGENTAUTH_AGENT_SECRET": "aas_…", "AGENTAUTH_MODEL": "claude-sonnet-4"}}}}`;

/** Adds `mcp` to the program: an MCP server on stdio until stdin closes. */
export function mcpCommand(program: Command): void {
  program
    .command('mcp')
    .description(
      'run an MCP server on stdio with the tools inspect_sign_in_request, sign_in, wait_for_sign_in, list_actions and wait_for_action (credentials from AGENTAUTH_* in the environment)',
    )
    .addHelpText('after', MCP_HELP)
    .option(
      '--allow-insecure-http',
      'accept a plain http AGENTAUTH_ISSUER on another host than this machine (the secret travels in clear)',
    )
    .option('--key-file <file>', "a key-bound agent's private key file, instead of AGENTAUTH_AGENT_SECRET")
    .action(async (flags: { allowInsecureHttp?: boolean; keyFile?: string }) => {
      const { runMcpServer } = await import('./mcp-server.ts');
      await runMcpServer({ allowInsecureHttp: flags.allowInsecureHttp === true, keyFile: flags.keyFile });
    });
}
