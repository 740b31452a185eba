/** `agentauth agent …`: agent credentials. */
import type { Command } from 'commander';
import { registerAgent, rotateAgentSecret, setAgentStatus } from '../../domain/agents.ts';
import type { AgentRecord } from '../../store/types.ts';
import { print, withContext } from '../common.ts';
import { revokeGrantsCommand, rotateSecretCommand } from './grants.ts';

const publicAgent = (a: AgentRecord) => ({
  agent_id: a.id,
  name: a.name,
  owner_email: a.owner_email,
  owner_name: a.owner_name,
  email_verified: a.owner_email_verified,
  status: a.status,
  created_at: new Date(a.created_at * 1000).toISOString(),
  last_used_at: a.last_used_at === null ? null : new Date(a.last_used_at * 1000).toISOString(),
});

export function agentCommand(program: Command): void {
  const agent = program.command('agent').description('manage agent credentials');
  agent
    .command('create')
    .description('register an agent; prints its agent_secret once')
    .requiredOption('--owner-email <email>', "the owner's email (the email claim)")
    .option('--owner-name <name>', "the owner's name (the name claim)")
    .option('--name <label>', 'a label for the agent')
    .option('--email-verified', "the owner's email address has been verified (email_verified claim)")
    .option('--json', 'print JSON')
    .action(
      async (options: {
        ownerEmail: string;
        ownerName?: string;
        name?: string;
        emailVerified?: boolean;
        json?: boolean;
      }) => {
        const { agent: created, secret } = await withContext((ctx) =>
          registerAgent(ctx, {
            ownerEmail: options.ownerEmail,
            ownerName: options.ownerName,
            name: options.name,
            emailVerified: !!options.emailVerified,
          }),
        );
        print(
          !!options.json,
          { ...publicAgent(created), agent_secret: secret },
          `agent_id:     ${created.id}\nagent_secret: ${secret}\n(the secret is shown only now; give it to the agent, never to a browser)`,
        );
      },
    );
  agent
    .command('list')
    .description('list agents')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const agents = await withContext((ctx) => ctx.store.listAgents());
      print(
        !!options.json,
        { agents: agents.map(publicAgent) },
        agents.map((a) => `${a.id}  ${a.status.padEnd(8)}  ${a.name}  <${a.owner_email}>`).join('\n') || '(no agents)',
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
      .action(async (id: string, options: { json?: boolean }) => {
        await withContext((ctx) => setAgentStatus(ctx, id, status));
        print(!!options.json, { agent_id: id, status }, `${id} is ${status}`);
      });
  }
  rotateSecretCommand(agent, 'agent', rotateAgentSecret);
  revokeGrantsCommand(agent, 'agent');
}
