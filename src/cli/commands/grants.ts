/**
 * What `agentauth client` and `agentauth agent` share for incident response: rotating a
 * secret, and revoking every grant.
 */
import type { Command } from 'commander';
import type { Context } from '../../context.ts';
import { revokeGrants } from '../../domain/revocation.ts';
import type { GrantOwner, RevokedGrants } from '../../store/types.ts';
import { print, withContext } from '../common.ts';

const ownerOf = (kind: 'client' | 'agent', id: string): GrantOwner =>
  kind === 'agent' ? { agent_id: id } : { client_id: id };
const revokedText = (counts: RevokedGrants) =>
  `revoked ${counts.grants} grant(s); ${counts.codes} unredeemed code(s) expired; ${counts.requests} sign-in(s) in progress stopped`;

/** `<kind> rotate-secret <id> [--grace s] [--revoke-grants]`, the same for clients and agents. */
export function rotateSecretCommand(
  parent: Command,
  kind: 'client' | 'agent',
  rotate: (ctx: Context, id: string, grace: number) => Promise<string>,
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
    .action(async (id: string, options: { grace: number; revokeGrants?: boolean; json?: boolean }) => {
      const { secret, revoked } = await withContext(async (ctx) => {
        const rotated = await rotate(ctx, id, options.grace);
        return {
          secret: rotated,
          revoked: options.revokeGrants ? await revokeGrants(ctx, ownerOf(kind, id)) : undefined,
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
    });
}

/** `<kind> revoke-grants <id>`: ends every token the client or agent holds (incident response). */
export function revokeGrantsCommand(parent: Command, kind: 'client' | 'agent'): void {
  parent
    .command(`revoke-grants <${kind}_id>`)
    .description(
      `revoke every grant of the ${kind}: its refresh and access tokens stop working, codes not yet redeemed and sign-ins in progress end`,
    )
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const revoked = await withContext((ctx) => revokeGrants(ctx, ownerOf(kind, id)));
      print(!!options.json, { [`${kind}_id`]: id, revoked }, `${id}: ${revokedText(revoked)}`);
    });
}

function seconds(value: string): number {
  if (!/^\d+$/.test(value)) throw new Error(`--grace takes a whole number of seconds (got "${value}")`);
  return Number(value);
}
