/**
 * The agentauth command line (docs/design.md §7): serve, migrate, and the management of clients and
 * agents. It reads the same environment as the server. --json prints one JSON object.
 */
import { Command, Option } from 'commander';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { createAccount, emailOf, issueLink, setAccountStatus } from '../console/accounts.ts';
import { InvalidField } from '../console/errors.ts';
import { recordConsoleEvent } from '../console/events.ts';
import type { Context } from '../context.ts';
import { registerAgent, rotateAgentSecret, setAgentStatus } from '../domain/agents.ts';
import { registerClient, resealClientSecrets, rotateClientSecret, setClientStatus } from '../domain/clients.ts';
import { revokeGrants } from '../domain/revocation.ts';
import { createContext } from '../app.ts';
import { resolveJwtSecret, startServer } from '../server.ts';
import { openStore, redactUrl } from '../store/open.ts';
import { mcpCommand } from './mcp.ts';
import { signInCommand } from './sign-in.ts';
import type { AccountRecord } from '../store/console-types.ts';
import type { AgentRecord, ClientRecord, GrantOwner, RevokedGrants } from '../store/types.ts';

const warn = (message: string) => process.stderr.write(`warning: ${message}\n`);

async function withContext<T>(work: (ctx: Context) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.databaseUrl, { poolSize: 1 });
  try {
    await store.migrate();
    return await work(
      await createContext(
        config,
        store,
        resolveJwtSecret(config, () => {}),
      ),
    );
  } finally {
    await store.close();
  }
}

function print(json: boolean, value: object, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

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

const isoTime = (epochSeconds: number | null) =>
  epochSeconds === null ? null : new Date(epochSeconds * 1000).toISOString();
const publicAccount = (a: AccountRecord) => ({
  account_id: a.id,
  email: a.email,
  name: a.name,
  role: a.role,
  status: a.status,
  email_verified: a.email_verified,
  created_at: isoTime(a.created_at),
  last_sign_in_at: isoTime(a.last_sign_in_at),
});

/** The account with this email (any case), or an error naming it. */
async function accountByEmail(ctx: Context, raw: string): Promise<AccountRecord> {
  let key: string;
  try {
    key = emailOf(raw).key;
  } catch {
    throw new Error(`${raw} is not an email address`);
  }
  const account = await ctx.store.console.findAccountByEmail(key);
  if (!account) throw new Error(`no account with the email ${raw}`);
  return account;
}

/** A one-time setup link for the account (it signs them in once; they then add a passkey or a password). */
async function setupLink(ctx: Context, account: AccountRecord): Promise<{ url: string; expiresAt: number }> {
  const link = await issueLink(ctx, 'setup', { accountId: account.id, ttl: ctx.config.consoleLinkTtl });
  await recordConsoleEvent(ctx, null, 'admin.setup_link', account.id, null, 'cli');
  return link;
}

const setupLinkText = (link: { url: string; expiresAt: number }) =>
  `setup link: ${link.url}\n(the link works once, until ${new Date(link.expiresAt * 1000).toISOString()}; open it in your browser, or send it to the person it is for)`;

const collect = (value: string, previous: string[]) => [...previous, value];

const ownerOf = (kind: 'client' | 'agent', id: string): GrantOwner =>
  kind === 'agent' ? { agent_id: id } : { client_id: id };
const revokedText = (counts: RevokedGrants) =>
  `revoked ${counts.grants} grant(s); ${counts.codes} unredeemed code(s) expired; ${counts.requests} sign-in(s) in progress stopped`;

/** `<kind> rotate-secret <id> [--grace s] [--revoke-grants]`, the same for clients and agents. */
function rotateSecretCommand(
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
function revokeGrantsCommand(parent: Command, kind: 'client' | 'agent'): void {
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

export function buildCli(): Command {
  const program = new Command('agentauth')
    .description('OAuth 2.1 / OpenID Connect authorization server for AI agents')
    .showHelpAfterError();

  program
    .command('serve')
    .description('run the server (configured by the environment: PORT, DATABASE_URL, JWT_SECRET, …)')
    .action(async () => {
      const config: Config = loadConfig();
      const server = await startServer(config, { warn });
      // The stream cap's default depends on the descriptor limit, so the operator sees what it came to.
      server.app.log.info(
        { issuer: config.baseUrl, database: redactUrl(config.databaseUrl), statusStreamsMax: config.statusStreamsMax },
        'agentauth is serving',
      );
      const stop = (signal: string) => {
        server.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
        // close() ends the connections after the grace; this holds the bound even if closing
        // the database hangs.
        setTimeout(() => {
          server.app.log.error(
            { signal },
            `shutdown did not finish within SHUTDOWN_TIMEOUT (${config.shutdownTimeout} s); exiting`,
          );
          process.exit(1);
        }, config.shutdownTimeout * 1000).unref();
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });

  program
    .command('migrate')
    .description('apply database migrations and exit')
    .action(async () => {
      const config = loadConfig();
      const store = await openStore(config.databaseUrl, { poolSize: 1 });
      try {
        await store.migrate();
      } finally {
        await store.close();
      }
      process.stdout.write(`migrations applied to ${redactUrl(config.databaseUrl)}\n`);
    });

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

  const account = program.command('account').description('manage console accounts (people who sign in to /console)');
  account
    .command('create')
    .description('create a console account; prints a one-time setup link to send to the person')
    .requiredOption('--email <email>', 'their email (unique, case-insensitive)')
    .option('--name <name>', 'their name')
    .option('--admin', 'make them an administrator (default: member)')
    .option('--json', 'print JSON')
    .action(async (options: { email: string; name?: string; admin?: boolean; json?: boolean }) => {
      const { created, link } = await withContext(async (ctx) => {
        let created: AccountRecord;
        try {
          created = await createAccount(ctx, {
            email: options.email,
            name: options.name,
            role: options.admin ? 'admin' : 'member',
          });
        } catch (error) {
          // The console's field messages, as one line about what was given.
          if (error instanceof InvalidField) throw new Error(`${options.email}: ${error.description}`);
          throw error;
        }
        await recordConsoleEvent(ctx, null, 'admin.create_account', created.id, null, 'cli');
        return { created, link: await setupLink(ctx, created) };
      });
      print(
        !!options.json,
        { ...publicAccount(created), setup_link: link.url, setup_link_expires_at: isoTime(link.expiresAt) },
        `account_id: ${created.id}\nemail:      ${created.email}\nrole:       ${created.role}\n${setupLinkText(link)}`,
      );
    });
  account
    .command('list')
    .description('list console accounts')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const accounts = await withContext((ctx) => ctx.store.console.listAccounts());
      print(
        !!options.json,
        { accounts: accounts.map(publicAccount) },
        accounts
          .map((a) => `${a.id}  ${a.status.padEnd(8)}  ${a.role.padEnd(6)}  ${a.email}${a.name ? `  (${a.name})` : ''}`)
          .join('\n') || '(no accounts)',
      );
    });
  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    account
      .command(`${name} <email>`)
      .description(
        name === 'disable' ? 'disable an account: it is signed out everywhere and cannot sign in' : 'enable an account',
      )
      .option('--json', 'print JSON')
      .action(async (email: string, options: { json?: boolean }) => {
        const changed = await withContext(async (ctx) => {
          const target = await accountByEmail(ctx, email);
          await setAccountStatus(ctx, null, target, status);
          await recordConsoleEvent(ctx, null, `admin.${name}_account`, target.id, null, 'cli');
          return target;
        });
        print(
          !!options.json,
          { account_id: changed.id, email: changed.email, status },
          `${changed.email} is ${status}`,
        );
      });
  }
  account
    .command('setup-link <email>')
    .description('a new one-time setup link for an account (someone who lost their passkey or password)')
    .option('--json', 'print JSON')
    .action(async (email: string, options: { json?: boolean }) => {
      const { target, link } = await withContext(async (ctx) => {
        const target = await accountByEmail(ctx, email);
        return { target, link: await setupLink(ctx, target) };
      });
      print(
        !!options.json,
        {
          account_id: target.id,
          email: target.email,
          setup_link: link.url,
          setup_link_expires_at: isoTime(link.expiresAt),
        },
        `${setupLinkText(link)}${target.status === 'active' ? '' : `\nnote: ${target.email} is disabled; the link works once the account is enabled`}`,
      );
    });

  signInCommand(program);
  mcpCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (error) {
    const known = error instanceof ConfigError || (error instanceof Error && !(error instanceof TypeError));
    process.stderr.write(`agentauth: ${error instanceof Error ? error.message : String(error)}\n`);
    if (!known) process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    process.exit(1);
  }
}
