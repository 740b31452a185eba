/**
 * The management operations on the database beside the server: the operations of
 * src/management/ as the operator (every record, no account of their own; acts recorded with
 * the detail `cli`). Answers the API's representations, as ./remote.ts does, so a command prints
 * the same on either side.
 */
import type { Context } from '../context.ts';
import { agentKeyOf } from '../domain/agents.ts';
import { InvalidField, NotFound, OAuthError } from '../errors.ts';
import {
  createAccount,
  createSetupLink,
  getAccountByEmail,
  listAccounts,
  updateAccount,
} from '../management/accounts.ts';
import { operator } from '../management/actor.ts';
import {
  createAgent,
  deleteAgent,
  listAgents,
  revokeAgentGrants,
  rotateAgentKey,
  rotateAgentSecret,
  setAgentStatus,
} from '../management/agents.ts';
import { listApiKeys, revokeApiKey } from '../management/api-keys.ts';
import {
  actionsOf,
  createClient,
  deleteClient,
  listClients,
  revokeClientGrants,
  rotateClientSecret,
  setClientStatus,
  updateClient,
} from '../management/clients.ts';
import { getAgentPolicy, setAgentPolicy } from '../management/policies.ts';
import { listSigningKeys, rotateSigningKey } from '../management/signing-keys.ts';
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
} from '../management/views.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  redeliverWebhook,
  rotateWebhookSecret,
  sendWebhookTestEvent,
  updateWebhook,
} from '../management/webhooks.ts';
import type { AccountRecord } from '../store/accounts.ts';
import { operatorLog, publicUrl, warn } from './common.ts';
import type { Management, SetupLink } from './management.ts';

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
  const actor = operator(options.adminEmail, operatorLog);
  const now = () => ctx.clock();
  /** A one-time setup link: the whole URL only where the server's public URL is known. */
  const setupLink = (link: { url: string; path: string; expiresAt: number }): SetupLink => ({
    url: publicUrl(ctx.config) === null ? null : link.url,
    path: link.path,
    expires_at: time(link.expiresAt),
  });
  const withLink = ({ account, link }: { account: AccountRecord; link: Parameters<typeof setupLink>[0] }) => ({
    account: accountView(account),
    setup_link: setupLink(link),
  });

  /** Runs an operation on the agent or client `id`, a missing one named as the command line named it. */
  const on = async <T>(kind: 'agent' | 'client', id: string, work: (id: string) => Promise<T>): Promise<T> => {
    try {
      return await work(id);
    } catch (error) {
      if (error instanceof NotFound) throw new Error(`no ${kind} ${id}`);
      throw error;
    }
  };
  const agent = <T>(id: string, work: (id: string) => Promise<T>) => on('agent', id, work);
  const client = <T>(id: string, work: (id: string) => Promise<T>) => on('client', id, work);

  return {
    listAgents: async () => (await listAgents(ctx, actor)).map((agent) => agentView(agent, now())),
    async createAgent({ name, owner, public_key }) {
      if (!owner)
        throw new Error('--owner-email is required on the database: the agent has no console account to belong to');
      const key = public_key === undefined ? undefined : agentKeyOf(public_key);
      const { agent, secret } = await createAgent(ctx, actor, { name, owner, key });
      return { agent: agentView(agent, now()), ...(secret === null ? {} : { agent_secret: secret }) };
    },
    rotateAgentKey: (id, publicKey) =>
      agent(id, async () => agentView(await rotateAgentKey(ctx, actor, id, agentKeyOf(publicKey)), now())),
    setAgentStatus: (id, status) =>
      agent(id, async () => agentView(await setAgentStatus(ctx, actor, id, status), now())),
    rotateAgentSecret: (id, graceSeconds) =>
      agent(id, async () => {
        const rotated = await rotateAgentSecret(ctx, actor, id, graceSeconds);
        return { agent: agentView(rotated.agent, now()), agent_secret: rotated.secret };
      }),
    revokeAgentGrants: (id) => agent(id, () => revokeAgentGrants(ctx, actor, id)),
    changeAgentPolicy: (id, change) =>
      agent(id, async () => {
        const current = await getAgentPolicy(ctx, actor, id);
        if (change(agentPolicyView(current)) === null) return agentPolicyView(current);
        // The core applies the change again to a fresh read when another one landed meanwhile.
        const stored = await setAgentPolicy(ctx, actor, id, (fresh) => {
          const policy = policyFromView(change(agentPolicyView(fresh)) ?? agentPolicyView(fresh));
          if (!policy) throw new InvalidField('credentials_expire_at', 'credentials_expire_at is not a date');
          return policy;
        });
        return agentPolicyView(stored);
      }),
    deleteAgent: (id) => agent(id, () => deleteAgent(ctx, actor, id)),

    listClients: async () => (await listClients(ctx, actor)).map((client) => clientView(client, now())),
    async createClient(input) {
      const { client, secret } = await createClient(ctx, actor, {
        name: input.name,
        redirectUris: input.redirect_uris,
        approval: input.confirmation,
        type: input.type,
        resources: input.resources,
        scopes: input.scopes,
        ...(input.jwks !== undefined || input.jwks_uri !== undefined
          ? { keys: { jwks: input.jwks, jwksUri: input.jwks_uri } }
          : {}),
        ...actionsOf(input),
      });
      if (client.token_endpoint_auth_method === 'private_key_jwt' && !ctx.config.privateKeyJwt)
        warn(
          'clients that sign with keys sign in only while the server runs with PRIVATE_KEY_JWT=true (or MCP_AUTHORIZATION=true)',
        );
      if (client.token_endpoint_auth_method === 'none' && !ctx.config.publicClients)
        warn('public clients sign in only while the server runs with PUBLIC_CLIENTS=true (or MCP_AUTHORIZATION=true)');
      return { client: clientView(client, now()), client_secret: secret };
    },
    updateClient: (id, changes) =>
      client(id, async () => {
        const { name, redirect_uris: redirectUris, confirmation: approval, scopes, jwks, jwks_uri } = changes;
        const keys = jwks !== undefined || jwks_uri !== undefined ? { keys: { jwks, jwksUri: jwks_uri } } : {};
        const actions = actionsOf(changes);
        return clientView(
          await updateClient(ctx, actor, id, { name, redirectUris, approval, scopes, ...keys, ...actions }),
          now(),
        );
      }),
    setClientStatus: (id, status) =>
      client(id, async () => clientView(await setClientStatus(ctx, actor, id, status), now())),
    rotateClientSecret: (id, graceSeconds) =>
      client(id, async () => {
        const rotated = await rotateClientSecret(ctx, actor, id, graceSeconds);
        return { client: clientView(rotated.client, now()), client_secret: rotated.secret };
      }),
    revokeClientGrants: (id) => client(id, () => revokeClientGrants(ctx, actor, id)),
    deleteClient: (id) => client(id, () => deleteClient(ctx, actor, id)),

    listAccounts: async () => (await listAccounts(ctx, actor)).map(accountView),
    async createAccount(input) {
      try {
        return withLink(await createAccount(ctx, actor, input));
      } catch (error) {
        // The rules' messages, as one line about what was given.
        if (error instanceof OAuthError) throw new Error(`${input.email}: ${error.description}`);
        throw error;
      }
    },
    accountByEmail: async (email) => accountView(await getAccountByEmail(ctx, actor, email)),
    setAccountStatus: async (id, status) => accountView(await updateAccount(ctx, actor, id, { status })),
    createSetupLink: async (id) => withLink(await createSetupLink(ctx, actor, id)),

    listApiKeys: async () => (await listApiKeys(ctx, actor)).map(apiKeyView),
    revokeApiKey: async (id) => apiKeyView(await revokeApiKey(ctx, actor, id)),

    listWebhooks: async () => (await listWebhooks(ctx, actor)).map(webhookView),
    async createWebhook(input) {
      const { webhook, secret } = await createWebhook(ctx, actor, input);
      return { webhook: webhookView(webhook), secret };
    },
    getWebhook: async (id) => webhookView(await getWebhook(ctx, actor, id)),
    updateWebhook: async (id, changes) => webhookView(await updateWebhook(ctx, actor, id, changes)),
    deleteWebhook: async (id) => webhookView(await deleteWebhook(ctx, actor, id)),
    async rotateWebhookSecret(id) {
      const { webhook, secret } = await rotateWebhookSecret(ctx, actor, id);
      return { webhook: webhookView(webhook), secret };
    },
    listWebhookDeliveries: async (id, limit) =>
      (await listWebhookDeliveries(ctx, actor, id, { limit })).data.map(deliveryView),
    retryWebhookDelivery: async (id, messageId) => deliveryView(await redeliverWebhook(ctx, actor, id, messageId)),
    sendWebhookTestEvent: async (id) => deliveryView(await sendWebhookTestEvent(ctx, actor, id)),

    listSigningKeys: () => listSigningKeys(ctx, actor),
    rotateSigningKey: (input) => rotateSigningKey(ctx, actor, input),
  };
}
