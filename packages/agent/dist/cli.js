#!/usr/bin/env node
import { createRequire as __agentauthCreateRequire } from 'node:module';
const require = __agentauthCreateRequire(import.meta.url);
import {
  Command,
  VERSION,
  actionsCommand,
  keygenCommand,
  signInCommand,
  withoutSecret
} from "./chunks/chunk-KGI6T66Y.js";
import "./chunks/chunk-ER33LZII.js";

// src/cli/mcp.ts
var MCP_HELP = `
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
    "env": {"AGENTAUTH_ISSUER": "https://auth.example.com", "AGENTAUTH_AGENT_ID": "agt_\u2026",
            "AGENTAUTH_AGENT_SECRET": "aas_\u2026", "AGENTAUTH_MODEL": "claude-sonnet-4"}}}}`;
function mcpCommand(program) {
  program.command("mcp").description(
    "run an MCP server on stdio with the tools inspect_sign_in_request, sign_in, wait_for_sign_in, list_actions and wait_for_action (credentials from AGENTAUTH_* in the environment)"
  ).addHelpText("after", MCP_HELP).option(
    "--allow-insecure-http",
    "accept a plain http AGENTAUTH_ISSUER on another host than this machine (the secret travels in clear)"
  ).option("--key-file <file>", "a key-bound agent's private key file, instead of AGENTAUTH_AGENT_SECRET").action(async (flags) => {
    const { runMcpServer } = await import("./chunks/mcp-server-W3NOIEHB.js");
    await runMcpServer({ allowInsecureHttp: flags.allowInsecureHttp === true, keyFile: flags.keyFile });
  });
}

// src/cli/index.ts
function buildAgentCli() {
  const program = new Command("agentauth-agent").description(
    "sign an AI agent in to agentauth sign-in requests: from a shell (sign-in) or as an MCP server (mcp); see what its owner is asked to approve (actions)"
  ).version(VERSION, "-V, --version", "print the version of @agentauth/agent").showHelpAfterError();
  signInCommand(program, { name: "agentauth-agent" });
  mcpCommand(program);
  keygenCommand(program, "agentauth-agent");
  actionsCommand(program);
  return program;
}
async function main(argv) {
  try {
    await buildAgentCli().parseAsync(argv);
  } catch (error) {
    process.stderr.write(withoutSecret(`agentauth-agent: ${error instanceof Error ? error.message : String(error)}
`));
    process.exit(1);
  }
}

// src/cli/bin.ts
await main(process.argv);
