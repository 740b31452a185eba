/** `agentauth signing-key …`: the key pairs that sign tokens with TOKEN_SIGNING_ALG (docs/design.md §19). */
import type { Command } from 'commander';
import { SIGNING_KEYS_RELOAD } from '../../config.ts';
import { print } from '../common.ts';
import type { SigningKey as View } from '../management.ts';
import { withManagement } from '../target.ts';

/** One line per key: kid, alg, state and its times. */
function lines(keys: View[]): string {
  if (keys.length === 0) return 'no signing keys (TOKEN_SIGNING_ALG is HS256: JWT_SECRET signs)';
  return keys
    .map((key) =>
      [
        key.kid,
        key.alg,
        key.state,
        `created ${key.created_at}`,
        key.activated_at ? `activated ${key.activated_at}` : null,
        key.retired_at ? `retired ${key.retired_at}` : null,
        key.published_until ? `published until ${key.published_until}` : null,
      ]
        .filter(Boolean)
        .join('  '),
    )
    .join('\n');
}

export function signingKeyCommand(program: Command): void {
  const signingKey = program
    .command('signing-key')
    .description(
      'the key pairs that sign tokens when TOKEN_SIGNING_ALG is ES256, EdDSA or RS256: list, rotate (an admin’s, on a remote server)',
    );

  signingKey
    .command('list')
    .description('every key of the set with its state (next, current, retired) and times; never a private key')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const keys = await withManagement(command, (management) => management.listSigningKeys());
      print(!!options.json, { signing_keys: keys }, lines(keys));
    });

  signingKey
    .command('rotate')
    .description(
      'the next key signs from now and the current one retires (published until its last token expires); a new next key is published. Refused while the next key is younger than one JWKS cache period, unless --now',
    )
    .option('--now', 'a key leaked: a new key pair signs at once, however young the next key is')
    .option(
      '--revoke-previous',
      'with --now: every earlier key leaves the key set at once, and the tokens it signed stop verifying everywhere',
    )
    .option('--json', 'print JSON')
    .action(async (options: { now?: boolean; revokePrevious?: boolean; json?: boolean }, command: Command) => {
      const { now, revokePrevious } = options;
      const keys = await withManagement(command, (management) => management.rotateSigningKey({ now, revokePrevious }));
      const withdrawn = revokePrevious ? '; earlier keys are withdrawn from the key set' : '';
      print(
        !!options.json,
        { signing_keys: keys },
        `rotated${now ? ' at once' : ''}; every node signs with the new key within ${SIGNING_KEYS_RELOAD} seconds${withdrawn}\n${lines(keys)}`,
      );
    });
}
