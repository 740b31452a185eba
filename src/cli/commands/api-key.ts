/** `agentauth api-key …`: keys of the management API (docs/design.md §15), made on the database only. */
import type { Command } from 'commander';
import { createApiKey, KEY_LIFETIME_DAYS } from '../../management/api-keys.ts';
import { apiKeyView } from '../../management/views.ts';
import type { ApiKeyAccess, ApiKeyReach } from '../../store/api-keys.ts';
import { operatorLog, print, withContext } from '../common.ts';
import { operator } from '../../management/actor.ts';
import { BESIDE_THE_SERVER, requireDatabase, withManagement } from '../target.ts';

export function apiKeyCommand(program: Command): void {
  const apiKey = program
    .command('api-key')
    .description('keys of the management API (/api/admin/v1): create, list, revoke');

  apiKey
    .command('create')
    .description('make a key for an account; it is printed once and stored only as a digest')
    .requiredOption('--email <email>', 'the account the key acts as')
    .requiredOption('--name <name>', 'what the key is for, e.g. "deploy pipeline"')
    .option('--read-only', 'the key may only read (default: read and write)')
    .option('--all', "the key reaches every account's records (the account must be an admin; default: its own)")
    .option(
      '--expires-in-days <days>',
      `days until the key stops working, 1 to ${KEY_LIFETIME_DAYS.max}`,
      (value) => Number(value),
      KEY_LIFETIME_DAYS.default,
    )
    .option('--json', 'print JSON')
    .action(
      async (
        options: {
          email: string;
          name: string;
          readOnly?: boolean;
          all?: boolean;
          expiresInDays: number;
          json?: boolean;
        },
        command: Command,
      ) => {
        requireDatabase(
          command,
          `api-key create needs the database, since no API key makes keys: make one in the console (/console/api-keys), or ${BESIDE_THE_SERVER}`,
        );
        const access: ApiKeyAccess = options.readOnly ? 'read' : 'write';
        const reach: ApiKeyReach = options.all ? 'all' : 'own';
        const { key, secret } = await withContext((ctx) =>
          createApiKey(ctx, operator(undefined, operatorLog), {
            name: options.name,
            access,
            reach,
            expiresInDays: options.expiresInDays,
            accountEmail: options.email,
          }),
        );
        print(
          !!options.json,
          { ...apiKeyView(key), api_key: secret },
          `api_key: ${secret}\n(the key is shown only now)\nid: ${key.id}, ${access === 'read' ? 'read only' : 'read and write'}, reaches ${reach === 'all' ? 'every account' : 'its own account'}, expires ${new Date(key.expires_at * 1000).toISOString()}\nuse it as: Authorization: Bearer ${secret.slice(0, 8)}…`,
        );
      },
    );

  apiKey
    .command('list')
    .description(
      'every key, newest first, with its last use (never the key itself); on a remote server, the keys the API key may see',
    )
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const views = await withManagement(command, (management) => management.listApiKeys());
      print(
        !!options.json,
        { api_keys: views },
        views.length === 0
          ? 'no API keys'
          : views
              .map(
                (k) =>
                  `${k.id}  …${k.hint}  ${k.name}  ${k.access}/${k.reach}  ${k.revoked_at ? `revoked ${k.revoked_at}` : `expires ${k.expires_at}`}  last used ${k.last_used_at ?? 'never'}`,
              )
              .join('\n'),
      );
    });

  apiKey
    .command('revoke <key_id>')
    .description('stop a key at once')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }, command: Command) => {
      const key = await withManagement(command, (management) => management.revokeApiKey(id));
      print(!!options.json, key, `${key.id} revoked`);
    });
}
