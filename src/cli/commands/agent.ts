/** `agentauth agent …`: agent credentials. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { print } from '../common.ts';
import type { AgentView } from '../management.ts';
import { withManagement } from '../target.ts';
import { deleteCommand, revokeGrantsCommand, rotateSecretCommand } from './grants.ts';

/** An agent as the command prints it, on the database or a remote server alike. */
const agentJson = (a: AgentView) => ({
  agent_id: a.id,
  name: a.name,
  owner_email: a.owner.email,
  owner_name: a.owner.name,
  email_verified: a.owner.email_verified,
  status: a.status,
  created_at: a.created_at,
  last_used_at: a.last_used_at,
  credential: a.credential,
  key_thumbprint: a.key_thumbprint,
});

/**
 * The public JWK in `path` (as `agentauth-agent keygen` prints it), as an object; whether it is
 * an acceptable key is the domain's rule, checked on the database or by the server.
 */
function publicKeyFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the public key file ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON: give the public JWK that agentauth-agent keygen printed`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${path} does not hold a JWK (a JSON object with kty, crv and x)`);
  return value as Record<string, unknown>;
}

/** What the commands print of a key-bound agent's key. */
const keyText = (a: AgentView) =>
  `key_thumbprint: ${a.key_thumbprint}\n(the agent proves itself with its private key; it has no secret)`;

export function agentCommand(program: Command): void {
  const agent = program.command('agent').description('manage agent credentials');
  agent
    .command('create')
    .description('register an agent; prints its agent_secret once')
    .option(
      '--owner-email <email>',
      "the owner's email (the email claim); required on the database; on a remote server, without it the agent belongs to the API key's account",
    )
    .option('--owner-name <name>', "the owner's name (the name claim)")
    .option('--name <label>', 'a label for the agent')
    .option('--email-verified', "the owner's email address has been verified (email_verified claim)")
    .option(
      '--public-key <file>',
      'a key-bound agent: the file holds its public JWK (Ed25519 or P-256, as agentauth-agent keygen prints it); prints its thumbprint instead of a secret',
    )
    .option('--json', 'print JSON')
    .action(
      async (
        options: {
          ownerEmail?: string;
          ownerName?: string;
          name?: string;
          emailVerified?: boolean;
          publicKey?: string;
          json?: boolean;
        },
        command: Command,
      ) => {
        const owner =
          options.ownerEmail === undefined
            ? undefined
            : { email: options.ownerEmail, name: options.ownerName, email_verified: !!options.emailVerified };
        const publicKey = options.publicKey === undefined ? undefined : publicKeyFile(options.publicKey);
        const { agent: created, agent_secret: secret } = await withManagement(command, (management) =>
          management.createAgent({ name: options.name, owner, public_key: publicKey }),
        );
        if (secret === undefined) {
          print(!!options.json, agentJson(created), `agent_id:       ${created.id}\n${keyText(created)}`);
          return;
        }
        print(
          !!options.json,
          { ...agentJson(created), agent_secret: secret },
          `agent_id:     ${created.id}\nagent_secret: ${secret}\n(the secret is shown only now; give it to the agent, never to a browser)`,
        );
      },
    );
  agent
    .command('list')
    .description('list agents')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const agents = await withManagement(command, (management) => management.listAgents());
      print(
        !!options.json,
        { agents: agents.map(agentJson) },
        agents.map((a) => `${a.id}  ${a.status.padEnd(8)}  ${a.name}  <${a.owner.email}>`).join('\n') || '(no agents)',
      );
    });
  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    agent
      .command(`${name} <agent_id>`)
      .description(`${name} an agent`)
      .option('--json', 'print JSON')
      .action(async (id: string, options: { json?: boolean }, command: Command) => {
        const changed = await withManagement(command, (management) => management.setAgentStatus(id, status));
        print(!!options.json, { agent_id: changed.id, status: changed.status }, `${changed.id} is ${changed.status}`);
      });
  }
  rotateSecretCommand(agent, 'agent', async (management, id, grace) => {
    const { agent_secret } = await management.rotateAgentSecret(id, grace);
    return agent_secret;
  });
  agent
    .command('rotate-key <agent_id>')
    .description(
      'bind the agent to a new public key: the old key (or its secret, for an agent that had one) stops working at once',
    )
    .requiredOption('--public-key <file>', 'the file holding the new public JWK (as agentauth-agent keygen prints it)')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { publicKey: string; json?: boolean }, command: Command) => {
      const publicKey = publicKeyFile(options.publicKey);
      const rotated = await withManagement(command, (management) => management.rotateAgentKey(id, publicKey));
      print(
        !!options.json,
        { agent_id: rotated.id, credential: rotated.credential, key_thumbprint: rotated.key_thumbprint },
        `agent_id:       ${rotated.id}\n${keyText(rotated)}\nthe previous key no longer works`,
      );
    });
  revokeGrantsCommand(agent, 'agent');
  deleteCommand(agent, 'agent');
}
