/** `agentauth client …`: client applications (relying parties; the console calls them websites). */
import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { resealClientSecrets } from '../../domain/clients.ts';
import { resourceScopeOf } from '../../domain/rules/resource-scope.ts';
import { InvalidRequest } from '../../errors.ts';
import { collect, print, withContext } from '../common.ts';
import type { ClientView } from '../management.ts';
import { BESIDE_THE_SERVER, requireDatabase, withManagement } from '../target.ts';
import { deleteCommand, revokeGrantsCommand, rotateSecretCommand } from './grants.ts';

/**
 * The key set (JWKS) in `path`, as an object; whether its keys are acceptable is the domain's
 * rule, checked on the database or by the server.
 */
function keySetFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the key set file ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON: give the client's public key set, {"keys": [...]}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${path} does not hold a key set (a JSON object with a "keys" array)`);
  return value as Record<string, unknown>;
}

/**
 * The action types one --action-type gives: JSON text (it starts with { or [), or a file holding
 * it; one type (an object) or several (an array). Whether they are acceptable is the domain's
 * rule (parseActionTypes), checked on the database or by the server.
 */
function actionTypesOption(value: string): unknown[] {
  const inline = /^\s*[[{]/.test(value);
  let text = value;
  if (!inline) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (error) {
      throw new Error(
        `cannot read the action type file ${value}: ${(error as NodeJS.ErrnoException).code ?? error} (give a file, or the JSON itself)`,
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(
      `${inline ? '--action-type' : value} is not JSON: give an action type, {"type": "payment", "description": "Pay {amount} {currency} to {payee}", "fields": {…}}, or an array of them`,
    );
  }
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** What --action-type says. */
const ACTION_TYPE_OPTION =
  'an action it may ask an agent\'s owner to approve (ACTION_APPROVALS): a file or the JSON of one type, {"type", "description", "fields"}, or of an array of them (repeat for several)';
/** What --token-delivery says. */
const TOKEN_DELIVERY_OPTION =
  "how it learns an owner's answer to an action: poll (the default with action types) or ping (needs --notification-endpoint)";

/** A client as the command prints it, on the database or a remote server alike. */
const clientJson = (c: ClientView) => ({
  client_id: c.id,
  name: c.name,
  redirect_uris: c.redirect_uris,
  status: c.status,
  approval: c.confirmation,
  token_endpoint_auth_method: c.token_endpoint_auth_method,
  ...(c.jwks_uri === null ? {} : { jwks_uri: c.jwks_uri }),
  source: c.source,
  resources: c.resources,
  scopes: c.scopes,
  ...(c.action_types.length === 0 && c.backchannel_token_delivery_mode === null
    ? {}
    : {
        action_types: c.action_types,
        backchannel_token_delivery_mode: c.backchannel_token_delivery_mode,
        backchannel_client_notification_endpoint: c.backchannel_client_notification_endpoint,
      }),
  created_at: c.created_at,
});

/** What --scope says of a scope: its name, a space, what it allows. */
const SCOPE_OPTION =
  "a scope this resource server serves, then what it allows in words a person reads: --scope 'notes:read Read your notes' (repeat for several; needs --resource)";

const clientLines = (c: ClientView) =>
  `name:          ${c.name}\nredirect URIs: ${c.redirect_uris.join(' ') || '(none)'}\napproval:      ${c.confirmation}${keyLines(c)}${actionLines(c)}`;

/** A client's action types and token delivery as the command prints them; nothing for one that asks nothing. */
function actionLines(c: ClientView): string {
  if (c.action_types.length === 0 && c.backchannel_token_delivery_mode === null) return '';
  const types = c.action_types.map((type) => `\n  ${type.type}: ${type.description}`).join('');
  const delivery =
    c.backchannel_token_delivery_mode === 'ping'
      ? `ping to ${c.backchannel_client_notification_endpoint}`
      : c.backchannel_token_delivery_mode;
  return `\naction types:  ${c.action_types.length === 0 ? '(none)' : types}\ntoken delivery: ${delivery}`;
}

/** A client's keys as the command prints them: its jwks_uri, or each key's kid and algorithm. */
function keyLines(c: ClientView): string {
  if (c.jwks_uri !== null) return `\nkeys:          at ${c.jwks_uri}`;
  if (c.jwks === null) return '';
  const keys = c.jwks.keys as Array<{ kid?: string; alg?: string; kty?: string }>;
  const named = keys.map((key, index) => `${key.kid ?? `#${index + 1}`} (${key.alg ?? key.kty})`);
  return `\nkeys:          ${named.join(', ')}`;
}

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
    .option('--scope <scope>', SCOPE_OPTION, collect, [])
    .option(
      '--jwks <file>',
      'a client that signs with keys (private_key_jwt, RFC 7523) instead of a secret: the file holding its public key set (JWKS); needs PRIVATE_KEY_JWT or MCP_AUTHORIZATION on the server',
    )
    .option(
      '--jwks-uri <url>',
      'a client that signs with keys (private_key_jwt): the https URL where it publishes its public key set',
    )
    .option('--action-type <file-or-json>', ACTION_TYPE_OPTION, collect, [])
    .addOption(new Option('--token-delivery <mode>', TOKEN_DELIVERY_OPTION).choices(['poll', 'ping']))
    .option('--notification-endpoint <url>', "a ping client's https endpoint, told when an owner has answered")
    .option('--json', 'print JSON')
    .action(
      async (
        options: {
          name: string;
          redirectUri: string[];
          approval: 'auto' | 'manual';
          public?: boolean;
          resource: string[];
          scope: string[];
          jwks?: string;
          jwksUri?: string;
          actionType: string[];
          tokenDelivery?: 'poll' | 'ping';
          notificationEndpoint?: string;
          json?: boolean;
        },
        command: Command,
      ) => {
        const { client: created, client_secret: secret } = await withManagement(command, (management) =>
          management.createClient({
            name: options.name,
            redirect_uris: options.redirectUri,
            confirmation: options.approval,
            type: options.public ? 'public' : 'confidential',
            resources: options.resource,
            scopes: options.scope.map(resourceScopeOf),
            ...(options.jwks === undefined ? {} : { jwks: keySetFile(options.jwks) }),
            ...(options.jwksUri === undefined ? {} : { jwks_uri: options.jwksUri }),
            ...(options.actionType.length === 0 ? {} : { action_types: options.actionType.flatMap(actionTypesOption) }),
            ...(options.tokenDelivery === undefined ? {} : { backchannel_token_delivery_mode: options.tokenDelivery }),
            ...(options.notificationEndpoint === undefined
              ? {}
              : { backchannel_client_notification_endpoint: options.notificationEndpoint }),
          }),
        );
        print(
          !!options.json,
          { ...clientJson(created), ...(secret === null ? {} : { client_secret: secret }) },
          secret !== null
            ? `client_id:     ${created.id}\nclient_secret: ${secret}\n(the secret is shown only now; store it safely)`
            : created.token_endpoint_auth_method === 'private_key_jwt'
              ? `client_id:     ${created.id}\n(it has no secret: it authenticates with assertions signed by its keys, private_key_jwt)`
              : `client_id:     ${created.id}\n(a public client: it has no secret and authenticates with its client_id and PKCE)`,
        );
      },
    );
  client
    .command('list')
    .description('list clients')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const clients = await withManagement(command, (management) => management.listClients());
      print(
        !!options.json,
        { clients: clients.map(clientJson) },
        clients
          .map(
            (c) =>
              `${c.id}  ${c.status.padEnd(8)}  ${c.confirmation.padEnd(6)}  ${c.name}  ${c.redirect_uris.join(' ')}`,
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
      .action(async (id: string, options: { json?: boolean }, command: Command) => {
        const changed = await withManagement(command, (management) => management.setClientStatus(id, status));
        print(!!options.json, { client_id: changed.id, status: changed.status }, `${changed.id} is ${changed.status}`);
      });
  }
  client
    .command('update <client_id>')
    .description(
      "change a client: its name, its redirect URIs, a resource server's scopes or its action types (a list given replaces the old one), its approval, its token delivery, or the keys of a client that signs with keys",
    )
    .option('--name <name>', 'display name shown on the authorization page')
    .option('--redirect-uri <uri>', 'redirect URI (repeat for several; replaces every registered one)', collect, [])
    .addOption(
      new Option(
        '--approval <mode>',
        'auto: continue as soon as the agent authenticates; manual: the person confirms',
      ).choices(['auto', 'manual']),
    )
    .option('--scope <scope>', `${SCOPE_OPTION}; replaces every registered one`, collect, [])
    .option(
      '--jwks <file>',
      'a client that signs with keys (private_key_jwt): the file holding its new public key set (JWKS), replacing its keys; assertions signed with the old ones are refused from then on',
    )
    .option(
      '--jwks-uri <url>',
      'a client that signs with keys (private_key_jwt): the https URL where it publishes its key set from now on, replacing its keys',
    )
    .option(
      '--action-type <file-or-json>',
      `${ACTION_TYPE_OPTION}; replaces every registered one ('[]': none)`,
      collect,
      [],
    )
    .addOption(
      new Option('--token-delivery <mode>', `${TOKEN_DELIVERY_OPTION}; none: neither`).choices([
        'poll',
        'ping',
        'none',
      ]),
    )
    .option(
      '--notification-endpoint <url>',
      "a ping client's https endpoint, told when an owner has answered ('none': no endpoint)",
    )
    .option('--json', 'print JSON')
    .action(
      async (
        id: string,
        options: {
          name?: string;
          redirectUri: string[];
          approval?: 'auto' | 'manual';
          scope: string[];
          jwks?: string;
          jwksUri?: string;
          actionType: string[];
          tokenDelivery?: 'poll' | 'ping' | 'none';
          notificationEndpoint?: string;
          json?: boolean;
        },
        command: Command,
      ) => {
        const changes = {
          name: options.name,
          redirect_uris: options.redirectUri.length > 0 ? options.redirectUri : undefined,
          scopes: options.scope.length > 0 ? options.scope.map(resourceScopeOf) : undefined,
          confirmation: options.approval,
          jwks: options.jwks === undefined ? undefined : keySetFile(options.jwks),
          jwks_uri: options.jwksUri,
          action_types: options.actionType.length > 0 ? options.actionType.flatMap(actionTypesOption) : undefined,
          backchannel_token_delivery_mode:
            options.tokenDelivery === 'none' ? null : (options.tokenDelivery as 'poll' | 'ping' | undefined),
          backchannel_client_notification_endpoint:
            options.notificationEndpoint === 'none' ? null : options.notificationEndpoint,
        };
        if (Object.values(changes).every((value) => value === undefined))
          throw new InvalidRequest(
            'nothing to change: give --name, --redirect-uri, --scope, --approval, --jwks, --jwks-uri, --action-type, --token-delivery or --notification-endpoint',
          );
        const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
        const updated = await withManagement(command, (management) => management.updateClient(id, defined));
        print(!!options.json, clientJson(updated), `${id} is updated\n${clientLines(updated)}`);
      },
    );
  deleteCommand(client, 'client');
  rotateSecretCommand(client, 'client', async (management, id, grace) => {
    const { client_secret } = await management.rotateClientSecret(id, grace);
    return client_secret;
  });
  revokeGrantsCommand(client, 'client');

  client
    .command('reseal')
    .description(
      're-encrypt all client secrets under the current JWT_SECRET (after a rotation, before dropping JWT_PREVIOUS_SECRETS)',
    )
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      requireDatabase(command, `client reseal re-encrypts the secrets stored in the database: ${BESIDE_THE_SERVER}`);
      const result = await withContext((ctx) => resealClientSecrets(ctx));
      print(
        !!options.json,
        result,
        `resealed ${result.resealed.length} client secret(s)${result.unreadable.length ? `; unreadable (sealed under a secret not configured): ${result.unreadable.join(' ')}` : ''}`,
      );
      if (result.unreadable.length) process.exitCode = 1;
    });
}
