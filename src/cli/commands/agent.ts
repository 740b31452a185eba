/** `agentauth agent …`: agent credentials. */
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
});

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
    .option('--json', 'print JSON')
    .action(
      async (
        options: {
          ownerEmail?: string;
          ownerName?: string;
          name?: string;
          emailVerified?: boolean;
          json?: boolean;
        },
        command: Command,
      ) => {
        const owner =
          options.ownerEmail === undefined
            ? undefined
            : { email: options.ownerEmail, name: options.ownerName, email_verified: !!options.emailVerified };
        const { agent: created, agent_secret: secret } = await withManagement(command, (management) =>
          management.createAgent({ name: options.name, owner }),
        );
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
  revokeGrantsCommand(agent, 'agent');
  deleteCommand(agent, 'agent');
}
