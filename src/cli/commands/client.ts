/** `agentauth client …`: client applications (relying parties; the console calls them websites). */
import { type Command, Option } from 'commander';
import { clientChangesDetail } from '../../console/clients.ts';
import { recordConsoleEvent } from '../../console/events.ts';
import {
  deleteClient,
  registerClient,
  resealClientSecrets,
  rotateClientSecret,
  setClientStatus,
  updateClient,
} from '../../domain/clients.ts';
import { InvalidRequest } from '../../errors.ts';
import type { ClientRecord } from '../../store/types.ts';
import { collect, print, warn, withContext } from '../common.ts';
import { revokeGrantsCommand, rotateSecretCommand } from './grants.ts';

const clientView = (c: ClientRecord) => ({
  client_id: c.id,
  name: c.name,
  redirect_uris: c.redirect_uris,
  status: c.status,
  approval: c.approval,
  token_endpoint_auth_method: c.token_endpoint_auth_method,
  source: c.source,
  resources: c.resources,
  created_at: new Date(c.created_at * 1000).toISOString(),
});

const clientLines = (c: ClientRecord) =>
  `name:          ${c.name}\nredirect URIs: ${c.redirect_uris.join(' ') || '(none)'}\napproval:      ${c.approval}`;

export function clientCommand(program: Command): void {
  const client = program.command('client').description('manage client applications (relying parties)');
  client
    .command('create')
    .description('register a client; prints its client_secret once')
    .requiredOption('--name <name>', 'display name shown on the authorization page')
    .option('--redirect-uri <uri>', 'redirect URI (repeat for several; required unless --resource)', collect, [])
    .addOption(
      new Option('--approval <mode>', 'auto: continue as soon as the agent authenticates; manual: the person confirms')
        .choices(['auto', 'manual'])
        .default('auto'),
    )
    .option(
      '--public',
      'a public client without a secret (an app on a device, an MCP client); needs PUBLIC_CLIENTS or MCP_AUTHORIZATION on the server',
    )
    .option(
      '--resource <uri>',
      'a resource (RFC 8707) this client serves: it may introspect the tokens issued for it (repeat for several)',
      collect,
      [],
    )
    .option('--json', 'print JSON')
    .action(
      async (options: {
        name: string;
        redirectUri: string[];
        approval: 'auto' | 'manual';
        public?: boolean;
        resource: string[];
        json?: boolean;
      }) => {
        const {
          client: created,
          secret,
          publicClients,
        } = await withContext(async (ctx) => ({
          ...(await registerClient(ctx, {
            name: options.name,
            redirectUris: options.redirectUri,
            approval: options.approval,
            public: options.public,
            resources: options.resource,
          })),
          publicClients: ctx.config.publicClients,
        }));
        if (secret === null && !publicClients)
          warn(
            'public clients sign in only while the server runs with PUBLIC_CLIENTS=true (or MCP_AUTHORIZATION=true)',
          );
        print(
          !!options.json,
          { ...clientView(created), ...(secret === null ? {} : { client_secret: secret }) },
          secret === null
            ? `client_id:     ${created.id}\n(a public client: it has no secret and authenticates with its client_id and PKCE)`
            : `client_id:     ${created.id}\nclient_secret: ${secret}\n(the secret is shown only now; store it safely)`,
        );
      },
    );
  client
    .command('list')
    .description('list clients')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const clients = await withContext((ctx) => ctx.store.listClients());
      print(
        !!options.json,
        { clients: clients.map(clientView) },
        clients
          .map(
            (c) => `${c.id}  ${c.status.padEnd(8)}  ${c.approval.padEnd(6)}  ${c.name}  ${c.redirect_uris.join(' ')}`,
          )
          .join('\n') || '(no clients)',
      );
    });
  for (const [name, status] of [
    ['disable', 'inactive'],
    ['enable', 'active'],
  ] as const) {
    client
      .command(`${name} <client_id>`)
      .description(`${name} a client`)
      .option('--json', 'print JSON')
      .action(async (id: string, options: { json?: boolean }) => {
        await withContext((ctx) => setClientStatus(ctx, id, status));
        print(!!options.json, { client_id: id, status }, `${id} is ${status}`);
      });
  }
  client
    .command('update <client_id>')
    .description('change a client: its name, its redirect URIs (the list given replaces the old one) or its approval')
    .option('--name <name>', 'display name shown on the authorization page')
    .option('--redirect-uri <uri>', 'redirect URI (repeat for several; replaces every registered one)', collect, [])
    .addOption(
      new Option(
        '--approval <mode>',
        'auto: continue as soon as the agent authenticates; manual: the person confirms',
      ).choices(['auto', 'manual']),
    )
    .option('--json', 'print JSON')
    .action(
      async (
        id: string,
        options: { name?: string; redirectUri: string[]; approval?: 'auto' | 'manual'; json?: boolean },
      ) => {
        const changes = {
          name: options.name,
          redirectUris: options.redirectUri.length > 0 ? options.redirectUri : undefined,
          approval: options.approval,
        };
        if (Object.values(changes).every((value) => value === undefined))
          throw new InvalidRequest('nothing to change: give --name, --redirect-uri or --approval');
        const updated = await withContext(async (ctx) => {
          const before = await ctx.store.findClient(id);
          const after = await updateClient(ctx, id, changes);
          await recordConsoleEvent(
            ctx,
            null,
            'website.update',
            id,
            null,
            `cli: ${clientChangesDetail(before!, after)}`,
          );
          return after;
        });
        print(!!options.json, clientView(updated), `${id} is updated\n${clientLines(updated)}`);
      },
    );
  client
    .command('delete <client_id>')
    .description(
      'delete a client: its credentials stop working, its grants are revoked (their tokens stop working), its unredeemed codes expire and its sign-ins in progress end',
    )
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => {
      const revoked = await withContext(async (ctx) => {
        const counts = await deleteClient(ctx, id);
        await recordConsoleEvent(
          ctx,
          null,
          'website.delete',
          id,
          null,
          `cli: grants ${counts.grants}, codes ${counts.codes}, requests ${counts.requests}`,
        );
        return counts;
      });
      print(
        !!options.json,
        { client_id: id, deleted: true, revoked },
        `${id} is deleted; revoked ${revoked.grants} grant(s), expired ${revoked.codes} code(s), ended ${revoked.requests} request(s)`,
      );
    });
  rotateSecretCommand(client, 'client', rotateClientSecret);
  revokeGrantsCommand(client, 'client');

  client
    .command('reseal')
    .description(
      're-encrypt all client secrets under the current JWT_SECRET (after a rotation, before dropping JWT_PREVIOUS_SECRETS)',
    )
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const result = await withContext((ctx) => resealClientSecrets(ctx));
      print(
        !!options.json,
        result,
        `resealed ${result.resealed.length} client secret(s)${result.unreadable.length ? `; unreadable (sealed under a secret not configured): ${result.unreadable.join(' ')}` : ''}`,
      );
      if (result.unreadable.length) process.exitCode = 1;
    });
}
