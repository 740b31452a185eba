/**
 * What `agentauth client` and `agentauth agent` share for incident response: rotating a
 * secret, revoking every grant, and deleting.
 */
import type { Command } from 'commander';
import { print } from '../common.ts';
import type { Management, Revoked } from '../management.ts';
import { withManagement } from '../target.ts';

type Kind = 'client' | 'agent';

const revokeOf = (management: Management, kind: Kind, id: string) =>
  kind === 'agent' ? management.revokeAgentGrants(id) : management.revokeClientGrants(id);
const revokedText = (counts: Revoked) =>
  `revoked ${counts.grants} grant(s); ${counts.codes} unredeemed code(s) expired; ${counts.requests} sign-in(s) in progress stopped`;

/** `<kind> rotate-secret <id> [--grace s] [--revoke-grants]`, the same for clients and agents. */
export function rotateSecretCommand(
  parent: Command,
  kind: Kind,
  rotate: (management: Management, id: string, grace: number) => Promise<string>,
): void {
  parent
    .command(`rotate-secret <${kind}_id>`)
    .description(`issue a new ${kind} secret; the old one stops working at once, or after --grace seconds`)
    .option('--grace <seconds>', 'keep accepting the old secret this long (zero-downtime rotation)', seconds, 0)
    .option(
      '--revoke-grants',
      `also revoke every grant of the ${kind}, ending the tokens already issued (after a leak)`,
    )
    .option('--json', 'print JSON')
    .action(
      async (id: string, options: { grace: number; revokeGrants?: boolean; json?: boolean }, command: Command) => {
        const { secret, revoked } = await withManagement(command, async (management) => {
          const rotated = await rotate(management, id, options.grace);
          return {
            secret: rotated,
            revoked: options.revokeGrants ? await revokeOf(management, kind, id) : undefined,
          };
        });
        const until =
          options.grace > 0
            ? `\nthe previous secret keeps working for ${options.grace} s`
            : '\nthe previous secret no longer works';
        print(
          !!options.json,
          {
            [`${kind}_id`]: id,
            [`${kind}_secret`]: secret,
            previous_secret_valid_for: options.grace,
            ...(revoked ? { revoked } : {}),
          },
          `${kind}_secret: ${secret}\n(the secret is shown only now)${until}${revoked ? `\n${revokedText(revoked)}` : ''}`,
        );
      },
    );
}

/** `<kind> revoke-grants <id>`: ends every token the client or agent holds (incident response). */
export function revokeGrantsCommand(parent: Command, kind: Kind): void {
  parent
    .command(`revoke-grants <${kind}_id>`)
    .description(
      `revoke every grant of the ${kind}: its refresh and access tokens stop working, codes not yet redeemed and sign-ins in progress end`,
    )
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const revoked = await withManagement(command, (management) => revokeOf(management, kind, id));
      print(!!options.json, { [`${kind}_id`]: id, revoked }, `${id}: ${revokedText(revoked)}`);
    });
}

/** `<kind> delete <id>`: the record goes, and with it everything it holds. */
export function deleteCommand(parent: Command, kind: Kind): void {
  parent
    .command(`delete <${kind}_id>`)
    .description(
      `delete ${kind === 'agent' ? 'an agent: its credentials stop working, its grants are revoked (their tokens stop working)' : 'a client: its credentials stop working, its grants are revoked (their tokens stop working)'}, its unredeemed codes expire and its sign-ins in progress end`,
    )
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const revoked = await withManagement(command, (management) =>
        kind === 'agent' ? management.deleteAgent(id) : management.deleteClient(id),
      );
      print(
        !!options.json,
        { [`${kind}_id`]: id, deleted: true, revoked },
        `${id} is deleted; revoked ${revoked.grants} grant(s), expired ${revoked.codes} code(s), ended ${revoked.requests} request(s)`,
      );
    });
}

function seconds(value: string): number {
  if (!/^\d+$/.test(value)) throw new Error(`--grace takes a whole number of seconds (got "${value}")`);
  return Number(value);
}
