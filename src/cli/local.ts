/**
 * The management operations on the database beside the server: the rules themselves
 * (src/domain/, src/console/), with the console events the CLI has always recorded (actor
 * null: the admins' activity names the CLI). Answers the API's representations, as ./remote.ts
 * does, so a command prints the same on either side.
 */
import {
  accountView,
  agentPolicyView,
  agentView,
  apiKeyView,
  clientView,
  deliveryView,
  policyFromView,
  time,
  webhookView,
} from '../api/views.ts';
import { createAccount, issueLink, setAccountStatus } from '../console/accounts.ts';
import { deleteAgent } from '../console/agents.ts';
import { listApiKeys, revokeApiKey } from '../console/api-keys.ts';
import { clientChangesDetail } from '../console/clients.ts';
import { recordConsoleEvent } from '../console/events.ts';
import type { Context } from '../context.ts';
import { policyOf, setAgentPolicy } from '../domain/agent-policy.ts';
import {
  agentKeyOf,
  registerAgent,
  registerKeyBoundAgent,
  rotateAgentKey,
  rotateAgentSecret,
  setAgentStatus,
} from '../domain/agents.ts';
import { deleteClient, registerClient, rotateClientSecret, setClientStatus, updateClient } from '../domain/clients.ts';
import { revokeGrants } from '../domain/revocation.ts';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  reachableWebhook,
  redeliver,
  rotateWebhookSecret,
  updateWebhook,
} from '../domain/webhooks/endpoints.ts';
import type { WebhookWithEvents } from '../store/webhook-types.ts';
import { InvalidField, NotFound } from '../errors.ts';
import type { AccountRecord } from '../store/console-types.ts';
import { emailKey, publicUrl, warn } from './common.ts';
import type { Management, SetupLink } from './management.ts';

/** The CLI acts with the database's full authority: as an admin reaching every account. */
const OPERATOR = { role: 'admin' } as AccountRecord;

/** What a command may say about how it acts on the database. */
export interface LocalOptions {
  /** The admin webhooks are managed as (their rules are an admin's); default: the first active admin. */
  adminEmail?: string;
}

/**
 * The management operations on `ctx`'s database.
 *
 * @example
 * await withContext((ctx) => localManagement(ctx).listAgents());
 */
export function localManagement(ctx: Context, options: LocalOptions = {}): Management {
  const agentOf = async (id: string) => {
    const agent = await ctx.store.findAgent(id);
    if (!agent) throw new NotFound(`no agent ${id}`);
    return agentView(agent, ctx.clock());
  };
  const clientOf = async (id: string) => {
    const client = await ctx.store.findClient(id);
    if (!client) throw new NotFound(`no client ${id}`);
    return clientView(client, ctx.clock());
  };
  const accountOf = async (id: string) => {
    const account = await ctx.store.console.findAccount(id);
    if (!account) throw new NotFound(`no account ${id}`);
    return account;
  };
  /** A one-time setup link: the whole URL only where the server's public URL is known. */
  const setupLink = async (account: AccountRecord): Promise<SetupLink> => {
    const link = await issueLink(ctx, 'setup', { accountId: account.id, ttl: ctx.config.consoleLinkTtl });
    await recordConsoleEvent(ctx, null, 'admin.setup_link', account.id, null, 'cli');
    return {
      url: publicUrl(ctx.config) === null ? null : link.url,
      path: link.path,
      expires_at: time(link.expiresAt),
    };
  };

  /** Runs a webhook rule as the CLI's admin; a change goes into the activity as `webhook.<action>`. */
  const asAdmin = async <T>(
    work: (admin: AccountRecord) => Promise<T>,
    action?: (result: T) => [name: string, target: string],
  ): Promise<T> => {
    const admin = await cliAdmin(ctx, options.adminEmail);
    const result = await work(admin);
    if (action) {
      const [name, target] = action(result);
      await recordConsoleEvent(ctx, null, `webhook.${name}`, target, null, `cli as ${admin.email}`);
    }
    return result;
  };
  const withSecret = ({ webhook, secret }: { webhook: WebhookWithEvents; secret: string }) => ({
    webhook: webhookView(webhook),
    secret,
  });

  return {
    listAgents: async () => (await ctx.store.listAgents()).map((agent) => agentView(agent, ctx.clock())),
    async createAgent({ name, owner, public_key }) {
      if (!owner)
        throw new Error('--owner-email is required on the database: the agent has no console account to belong to');
      const input = { ownerEmail: owner.email, ownerName: owner.name, name, emailVerified: !!owner.email_verified };
      if (public_key !== undefined) {
        const agent = await registerKeyBoundAgent(ctx, input, agentKeyOf(public_key));
        return { agent: agentView(agent, ctx.clock()) };
      }
      const { agent, secret } = await registerAgent(ctx, input);
      return { agent: agentView(agent, ctx.clock()), agent_secret: secret };
    },
    async rotateAgentKey(id, publicKey) {
      await rotateAgentKey(ctx, id, agentKeyOf(publicKey));
      return agentOf(id);
    },
    async setAgentStatus(id, status) {
      await setAgentStatus(ctx, id, status);
      return agentOf(id);
    },
    async rotateAgentSecret(id, graceSeconds) {
      const secret = await rotateAgentSecret(ctx, id, graceSeconds);
      return { agent: await agentOf(id), agent_secret: secret };
    },
    revokeAgentGrants: (id) => revokeGrants(ctx, { agent_id: id }),
    async getAgentPolicy(id) {
      const agent = await ctx.store.findAgent(id);
      if (!agent) throw new NotFound(`no agent ${id}`);
      return agentPolicyView(policyOf(agent));
    },
    async setAgentPolicy(id, view) {
      const policy = policyFromView(view);
      if (!policy) throw new InvalidField('credentials_expire_at', 'credentials_expire_at is not a date');
      const stored = agentPolicyView(await setAgentPolicy(ctx, id, policy));
      await recordConsoleEvent(ctx, null, 'agent.policy', id, null, 'cli');
      return stored;
    },
    async deleteAgent(id) {
      const agent = await ctx.store.findAgent(id);
      if (!agent) throw new NotFound(`no agent ${id}`);
      const revoked = await deleteAgent(ctx, agent);
      const detail = `cli: grants ${revoked.grants}, codes ${revoked.codes}, requests ${revoked.requests}`;
      await recordConsoleEvent(ctx, null, 'agent.delete', id, null, detail);
      return revoked;
    },

    listClients: async () => (await ctx.store.listClients()).map((client) => clientView(client, ctx.clock())),
    async createClient(input) {
      const { client, secret } = await registerClient(ctx, {
        name: input.name,
        redirectUris: input.redirect_uris,
        approval: input.approval,
        public: input.type === 'public',
        resources: input.resources,
      });
      if (secret === null && !ctx.config.publicClients)
        warn('public clients sign in only while the server runs with PUBLIC_CLIENTS=true (or MCP_AUTHORIZATION=true)');
      return { client: clientView(client, ctx.clock()), client_secret: secret };
    },
    async updateClient(id, changes) {
      const before = await ctx.store.findClient(id);
      const after = await updateClient(ctx, id, {
        name: changes.name,
        redirectUris: changes.redirect_uris,
        approval: changes.approval,
      });
      const detail = `cli: ${clientChangesDetail(before!, after)}`;
      await recordConsoleEvent(ctx, null, 'website.update', id, null, detail);
      return clientView(after, ctx.clock());
    },
    async setClientStatus(id, status) {
      await setClientStatus(ctx, id, status);
      return clientOf(id);
    },
    async rotateClientSecret(id, graceSeconds) {
      const secret = await rotateClientSecret(ctx, id, graceSeconds);
      return { client: await clientOf(id), client_secret: secret };
    },
    revokeClientGrants: (id) => revokeGrants(ctx, { client_id: id }),
    async deleteClient(id) {
      const revoked = await deleteClient(ctx, id);
      const detail = `cli: grants ${revoked.grants}, codes ${revoked.codes}, requests ${revoked.requests}`;
      await recordConsoleEvent(ctx, null, 'website.delete', id, null, detail);
      return revoked;
    },

    listAccounts: async () => (await ctx.store.console.listAccounts()).map(accountView),
    async createAccount(input) {
      let created: AccountRecord;
      try {
        created = await createAccount(ctx, input);
      } catch (error) {
        // The console's field messages, as one line about what was given.
        if (error instanceof InvalidField) throw new Error(`${input.email}: ${error.description}`);
        throw error;
      }
      await recordConsoleEvent(ctx, null, 'admin.create_account', created.id, null, 'cli');
      return { account: accountView(created), setup_link: await setupLink(created) };
    },
    accountByEmail: async (email) => accountView(await accountRecordByEmail(ctx, email)),
    async setAccountStatus(id, status) {
      const target = await accountOf(id);
      await setAccountStatus(ctx, null, target, status);
      await recordConsoleEvent(
        ctx,
        null,
        status === 'disabled' ? 'admin.disable_account' : 'admin.enable_account',
        id,
        null,
        'cli',
      );
      return accountView(await accountOf(id));
    },
    async createSetupLink(id) {
      const account = await accountOf(id);
      return { account: accountView(account), setup_link: await setupLink(account) };
    },

    listApiKeys: async () => (await listApiKeys(ctx, OPERATOR)).map(apiKeyView),
    async revokeApiKey(id) {
      const revoked = await revokeApiKey(ctx, OPERATOR, id);
      await recordConsoleEvent(ctx, null, 'api_key.revoke', revoked.id, null, 'cli');
      return apiKeyView(revoked);
    },

    listWebhooks: async () => (await asAdmin((admin) => listWebhooks(ctx, admin))).map(webhookView),
    createWebhook: async (input) =>
      withSecret(
        await asAdmin(
          (admin) => createWebhook(ctx, admin, input),
          (made) => ['create', made.webhook.webhook.id],
        ),
      ),
    getWebhook: async (id) => webhookView(await asAdmin((admin) => reachableWebhook(ctx, admin, id))),
    updateWebhook: async (id, changes) => {
      const action = changes.status === 'disabled' ? 'disable' : changes.status === 'enabled' ? 'enable' : 'update';
      return webhookView(
        await asAdmin(
          (admin) => updateWebhook(ctx, admin, id, changes),
          () => [action, id],
        ),
      );
    },
    deleteWebhook: async (id) =>
      webhookView(
        await asAdmin(
          (admin) => deleteWebhook(ctx, admin, id),
          () => ['delete', id],
        ),
      ),
    rotateWebhookSecret: async (id) =>
      withSecret(
        await asAdmin(
          (admin) => rotateWebhookSecret(ctx, admin, id),
          () => ['rotate_secret', id],
        ),
      ),
    listWebhookDeliveries: async (id, limit) =>
      (await asAdmin((admin) => listDeliveries(ctx, admin, id, { limit }))).data.map(deliveryView),
    async retryWebhookDelivery(id, messageId) {
      const delivery = await asAdmin(
        (admin) => redeliver(ctx, admin, id, messageId),
        () => ['redeliver', id],
      );
      const attempts = await ctx.store.webhooks.listAttempts(delivery.endpoint_id, delivery.message_id);
      return deliveryView({ delivery, attempts });
    },
  };
}

/** The admin the CLI manages webhooks as: the one named, or else the first active admin. */
async function cliAdmin(ctx: Context, email?: string): Promise<AccountRecord> {
  if (email !== undefined) {
    const account = await accountRecordByEmail(ctx, email);
    if (account.role !== 'admin' || account.status !== 'active')
      throw new Error(`${email} is not an active admin: only admins manage webhooks`);
    return account;
  }
  const admin = (await ctx.store.console.listAccounts()).find((a) => a.role === 'admin' && a.status === 'active');
  if (!admin)
    throw new Error('webhooks belong to an admin: make one first (agentauth account create --admin --email …)');
  return admin;
}

/**
 * The account with this email (any case), or an error naming it.
 *
 * @example
 * const account = await accountRecordByEmail(ctx, 'ada@example.com');
 */
export async function accountRecordByEmail(ctx: Context, raw: string): Promise<AccountRecord> {
  const account = await ctx.store.console.findAccountByEmail(emailKey(raw));
  if (!account) throw new Error(`no account with the email ${raw}`);
  return account;
}
