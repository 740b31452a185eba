/**
 * What the management commands do, as one typed interface with two implementations: on the
 * database beside the server (./local.ts, the rules themselves) and through the management API
 * of a remote server (./remote.ts, docs/design.md §15). Both answer the API's representations
 * (src/api/views.ts), and each command prints from them in one place, so a command prints the
 * same on either side.
 */
import type { Static } from '@sinclair/typebox';
import type { RotateInput } from '../management/signing-keys.ts';
import type {
  AccountView,
  AgentPolicyView,
  AgentView,
  ApiKeyView,
  ClientView,
  DeliveryView,
  RevokedView,
  SigningKeyView,
  WebhookView,
} from '../management/views.ts';

export type { AccountView, AgentPolicyView, AgentView, ClientView };

/** What a command changes in a policy: the new one, or null when it changes nothing. */
export type PolicyChange = (current: AgentPolicyView) => AgentPolicyView | null;
export type ApiKey = Static<typeof ApiKeyView>;
export type Revoked = Static<typeof RevokedView>;
export type Webhook = Static<typeof WebhookView>;
export type WebhookDelivery = Static<typeof DeliveryView>;
export type SigningKey = Static<typeof SigningKeyView>;

/** A one-time setup link for an account, as the command shows it. */
export interface SetupLink {
  /** The whole link; null where it is not known (locally without BASE_URL: see publicUrl). */
  url: string | null;
  /** The link's path on the server's address. */
  path: string;
  /** When it stops working (RFC 3339); null when the server did not say. */
  expires_at: string | null;
}

/** The owner of an agent with no console account, as `agent create --owner-email` names it. */
export interface AgentOwner {
  email: string;
  name?: string;
  email_verified?: boolean;
}

/** A scope a resource server serves, with what it allows in words (the API's shape). */
export interface ResourceScopeInput {
  name: string;
  description: string;
}

export interface NewClient {
  name: string;
  redirect_uris: string[];
  resources: string[];
  /** The scopes it serves at its resources (a resource server's). */
  scopes?: ResourceScopeInput[];
  type: 'confidential' | 'public';
  /** The client's confirmation setting (the CLI's --approval). */
  confirmation: 'auto' | 'manual';
  /** A client that signs with keys (private_key_jwt): its public key set (the CLI's --jwks file). */
  jwks?: Record<string, unknown>;
  /** …or where it publishes one (--jwks-uri). */
  jwks_uri?: string;
  /** The actions it may ask owners to approve (--action-type), as parseActionTypes reads them. */
  action_types?: unknown[];
  /** poll or ping (--token-delivery); null for none. */
  backchannel_token_delivery_mode?: 'poll' | 'ping' | null;
  /** A ping client's https endpoint (--notification-endpoint); null for none. */
  backchannel_client_notification_endpoint?: string | null;
}

export interface ClientChanges {
  name?: string;
  redirect_uris?: string[];
  /** Replaces the scopes a resource server serves. */
  scopes?: ResourceScopeInput[];
  confirmation?: 'auto' | 'manual';
  /** A client that signs with keys: its new public key set (the CLI's --jwks file)… */
  jwks?: Record<string, unknown>;
  /** …or where it publishes it now (--jwks-uri). */
  jwks_uri?: string;
  /** Replaces its action types ([] for none). */
  action_types?: unknown[];
  backchannel_token_delivery_mode?: 'poll' | 'ping' | null;
  backchannel_client_notification_endpoint?: string | null;
}

export interface NewWebhook {
  url: string;
  events: string[];
  description?: string;
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string;
  status?: 'enabled' | 'disabled';
}

/**
 * The management operations the commands use, named as the API's operations are.
 *
 * @example
 * const agents = await management.listAgents();
 */
export interface Management {
  listAgents(): Promise<AgentView[]>;
  /**
   * An agent of `owner` (no console account); without an owner, the remote key's account owns it.
   * With `public_key` (a public JWK) a key-bound agent, answered without a secret.
   */
  createAgent(input: {
    name?: string;
    owner?: AgentOwner;
    public_key?: Record<string, unknown>;
  }): Promise<{ agent: AgentView; agent_secret?: string }>;
  /** Binds the agent to a new public key (a JWK); the old key or secret stops at once. */
  rotateAgentKey(id: string, publicKey: Record<string, unknown>): Promise<AgentView>;
  setAgentStatus(id: string, status: 'active' | 'disabled'): Promise<AgentView>;
  rotateAgentSecret(id: string, graceSeconds: number): Promise<{ agent: AgentView; agent_secret: string }>;
  revokeAgentGrants(id: string): Promise<Revoked>;
  deleteAgent(id: string): Promise<Revoked>;
  /**
   * Changes the policy by `change` (null: no change), applied to the policy as it is when it is
   * written, so a change made meanwhile by someone else is kept, not overwritten (docs/design.md
   * §16); answers it as stored.
   */
  changeAgentPolicy(id: string, change: PolicyChange): Promise<AgentPolicyView>;

  listClients(): Promise<ClientView[]>;
  createClient(input: NewClient): Promise<{ client: ClientView; client_secret: string | null }>;
  updateClient(id: string, changes: ClientChanges): Promise<ClientView>;
  setClientStatus(id: string, status: 'active' | 'inactive'): Promise<ClientView>;
  rotateClientSecret(id: string, graceSeconds: number): Promise<{ client: ClientView; client_secret: string }>;
  revokeClientGrants(id: string): Promise<Revoked>;
  deleteClient(id: string): Promise<Revoked>;

  listAccounts(): Promise<AccountView[]>;
  createAccount(input: {
    email: string;
    name?: string;
    role: 'admin' | 'member';
  }): Promise<{ account: AccountView; setup_link: SetupLink }>;
  /** The account with this email (any case), or an error naming the email. */
  accountByEmail(email: string): Promise<AccountView>;
  setAccountStatus(id: string, status: 'active' | 'disabled'): Promise<AccountView>;
  createSetupLink(id: string): Promise<{ account: AccountView; setup_link: SetupLink }>;

  listApiKeys(): Promise<ApiKey[]>;
  revokeApiKey(id: string): Promise<ApiKey>;

  /** Webhooks are an admin's: on the database the CLI acts as one (--admin-email), remotely as the key's account. */
  listWebhooks(): Promise<Webhook[]>;
  createWebhook(input: NewWebhook): Promise<{ webhook: Webhook; secret: string }>;
  getWebhook(id: string): Promise<Webhook>;
  updateWebhook(id: string, changes: WebhookChanges): Promise<Webhook>;
  deleteWebhook(id: string): Promise<Webhook>;
  rotateWebhookSecret(id: string): Promise<{ webhook: Webhook; secret: string }>;
  /** The newest `limit` deliveries of the webhook's log. */
  listWebhookDeliveries(id: string, limit: number): Promise<WebhookDelivery[]>;
  /** Sends a delivery again, with its message id, now. */
  retryWebhookDelivery(id: string, messageId: string): Promise<WebhookDelivery>;
  /** Sends a signed webhook.test event to the webhook now; the running server delivers it. */
  sendWebhookTestEvent(id: string): Promise<WebhookDelivery>;

  /** The signing keys (an admin's): every key of the shared set, oldest first. */
  listSigningKeys(): Promise<SigningKey[]>;
  /** Rotates on demand (at once with `now`, for a leaked key); answers the set after the rotation. */
  rotateSigningKey(input?: RotateInput): Promise<SigningKey[]>;
}
