/**
 * The management API's representations: for each record, the TypeBox schema the OpenAPI
 * document publishes and Fastify serialises answers with (so no column the schema does not name
 * can leak: no digest, no sealed secret), and the function that makes it from the record.
 * Times are RFC 3339 strings in UTC.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { ApiKeyRecord } from '../store/api-keys.ts';
import type { AccountRecord } from '../store/accounts.ts';
import type { ConsoleEventView } from '../store/history.ts';
import type { SignInEntry } from './history.ts';
import type { AgentPolicy, AgentRecord } from '../store/agents.ts';
import type { ClientRecord } from '../store/clients.ts';
import type { GrantRecord } from '../store/tokens.ts';
import type { WebhookWithEvents } from '../store/webhooks.ts';
import type { SigningKeyRecord } from '../store/signing-keys.ts';
import type { DeliveryWithAttempts } from '../domain/webhooks/endpoints.ts';

const Time = Type.String({ format: 'date-time', description: 'RFC 3339, UTC.' });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An epoch-seconds time as the API writes it. */
export const time = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
const maybeTime = (seconds: number | null) => (seconds === null ? null : time(seconds));

/** `{ error, error_description }`: every error of the API, as of the protocol (docs/reference/errors.md). */
export const ErrorView = Type.Object(
  {
    error: Type.String({ description: 'The error code (docs/reference/errors.md).' }),
    error_description: Type.String(),
  },
  { $id: 'Error', title: 'Error' },
);

export const AgentView = Type.Object(
  {
    id: Type.String({ examples: ['agt_3x9Kq0aZ1bC2dE3f'], description: 'The agent_id it signs in with.' }),
    name: Type.String({ description: 'A label for people; not a claim.' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
      description: 'disabled: its sign-ins and tokens are refused until it is active again.',
    }),
    owner: Type.Object(
      {
        email: Type.String({ description: 'The email claim of its sign-ins.' }),
        name: Nullable(Type.String({ description: 'The name claim.' })),
        email_verified: Type.Boolean({ description: 'The email_verified claim.' }),
      },
      { description: 'The person it acts for: its account’s, or given when it was made without one.' },
    ),
    account_id: Nullable(Type.String({ description: 'The console account that owns it; null when made by the CLI.' })),
    created_at: Time,
    last_used_at: Nullable(Type.String({ format: 'date-time', description: 'Its last sign-in, to the minute.' })),
    previous_secret_expires_at: Nullable(
      Type.String({ format: 'date-time', description: 'Until when the secret before the last rotation works.' }),
    ),
    credential: Type.Union([Type.Literal('secret'), Type.Literal('key')], {
      description:
        'How it proves itself: `secret` (agent_secret) or `key` (agent_assertion, signed with the private half of its registered public key).',
    }),
    key_thumbprint: Nullable(
      Type.String({
        examples: ['kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k'],
        description: 'The RFC 7638 SHA-256 thumbprint of its public key (base64url); null for an agent with a secret.',
      }),
    ),
  },
  { $id: 'Agent', title: 'Agent' },
);
export type AgentView = Static<typeof AgentView>;

export function agentView(agent: AgentRecord, now: number): AgentView {
  const previousLive = agent.previous_secret_expires_at !== null && agent.previous_secret_expires_at > now;
  return {
    id: agent.id,
    name: agent.name,
    status: agent.status,
    owner: { email: agent.owner_email, name: agent.owner_name, email_verified: agent.owner_email_verified },
    account_id: agent.account_id,
    created_at: time(agent.created_at),
    last_used_at: maybeTime(agent.last_used_at),
    previous_secret_expires_at: previousLive ? time(agent.previous_secret_expires_at!) : null,
    credential: agent.public_jwk == null ? 'secret' : 'key',
    key_thumbprint: agent.key_thumbprint ?? null,
  };
}

/** One website's standing answer to its action requests (docs/design.md §21). */
export const ActionRuleView = Type.Object(
  {
    client_id: Type.String({ minLength: 1, maxLength: 512, description: 'The website (a registered client id).' }),
    answer: Type.Union([Type.Literal('always'), Type.Literal('never'), Type.Literal('ask')], {
      description:
        'always: approved without asking (within up_to, when set); never: denied without asking; ask: the owner decides each one (as without a rule).',
    }),
    up_to: Type.Optional(
      Type.Object(
        {
          amount: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000_000 }),
          currency: Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217, e.g. EUR (stored in capitals).' }),
        },
        {
          additionalProperties: false,
          description:
            'Only with always: approve without asking only an action of a type that names an amount and a currency, in this currency, whose amounts together are at most this; any other is asked about.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * What an agent's owner allows it (docs/design.md §16): the domain's AgentPolicy, its expiry as
 * RFC 3339 like every time of the API. Agents nobody restricted have the default: any website,
 * no ceiling, no expiry, no limit.
 */
export const AgentPolicyView = Type.Object(
  {
    clients: Type.Union([Type.Literal('any'), Type.Literal('listed'), Type.Literal('ask')], {
      description:
        'Which clients (websites) it may sign in to. any: every client (the default); listed: only those in allowed_clients, others are refused (403 access_denied); ask: those listed at once, for another the owner is asked first (202 approval_pending).',
    }),
    allowed_clients: Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
      maxItems: 100,
      description: 'The websites (client ids) it may sign in to without asking; each must be registered.',
    }),
    scope_ceiling: Nullable(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 100,
        description:
          'The most a sign-in may share: a request for a scope outside it is refused, a resource server’s scope too. Each is openid, email, profile or a scope a resource server registers. null: no ceiling.',
      }),
    ),
    credentials_expire_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'RFC 3339. From then on its sign-ins are refused until the owner extends it. null: never.',
      }),
    ),
    max_sign_ins_per_hour: Nullable(
      Type.Integer({
        minimum: 1,
        maximum: 100_000,
        description: 'Sign-ins past this many in the last hour are refused. null: no limit.',
      }),
    ),
    actions: Type.Array(ActionRuleView, {
      maxItems: 100,
      description:
        'How the owner answers a website’s action requests (OpenID CIBA with RFC 9396 authorization details; ACTION_APPROVALS): one rule per website; a website without one asks the owner each time (the default). [] for none.',
    }),
  },
  { $id: 'AgentPolicy', title: 'AgentPolicy', additionalProperties: false },
);
export type AgentPolicyView = Static<typeof AgentPolicyView>;

/** The API's form of a policy. */
export function agentPolicyView(policy: AgentPolicy): AgentPolicyView {
  return {
    clients: policy.websites,
    allowed_clients: [...policy.allowed_clients],
    scope_ceiling:
      policy.scope_ceiling === null ? null : ([...policy.scope_ceiling] as AgentPolicyView['scope_ceiling']),
    credentials_expire_at: maybeTime(policy.credentials_expire_at),
    max_sign_ins_per_hour: policy.max_sign_ins_per_hour,
    actions: policy.actions.map((rule) => ({ ...rule, ...(rule.up_to ? { up_to: { ...rule.up_to } } : {}) })),
  };
}

/**
 * The domain's policy from the API's form (a PUT's body, or what the CLI built): its expiry in
 * epoch seconds, a moment within a second rounded up so it is never earlier than asked.
 * Undefined when the expiry is not a time (the API's schema checks it before).
 *
 * @example
 * policyFromView({ ...agentPolicyView(DEFAULT_POLICY), credentials_expire_at: '2027-01-31T00:00:00Z' }).credentials_expire_at; // 1801440000
 */
export function policyFromView(view: AgentPolicyView): AgentPolicy | undefined {
  const expiry = view.credentials_expire_at === null ? null : Date.parse(view.credentials_expire_at);
  if (expiry !== null && !Number.isFinite(expiry)) return undefined;
  return {
    websites: view.clients,
    allowed_clients: [...view.allowed_clients],
    scope_ceiling: view.scope_ceiling === null ? null : [...view.scope_ceiling],
    credentials_expire_at: expiry === null ? null : Math.ceil(expiry / 1000),
    max_sign_ins_per_hour: view.max_sign_ins_per_hour,
    actions: view.actions.map((rule) => ({ ...rule, ...(rule.up_to ? { up_to: { ...rule.up_to } } : {}) })),
  };
}

/** One action type a website registers (docs/design.md §21): its fields and how it reads in words. */
export const ActionTypeView = Type.Object(
  {
    type: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_.:/-]+$',
      examples: ['payment'],
      description: 'The `type` of the RFC 9396 authorization details it describes.',
    }),
    description: Type.String({
      minLength: 1,
      maxLength: 200,
      examples: ['Pay {amount} {currency} to {payee}'],
      description:
        'How an action of this type reads to the agent’s owner: plain text naming its fields in braces, each replaced by the value (a missing optional field by nothing).',
    }),
    fields: Type.Record(
      Type.String(),
      Type.Object(
        {
          type: Type.Union([
            Type.Literal('string'),
            Type.Literal('number'),
            Type.Literal('integer'),
            Type.Literal('boolean'),
          ]),
          required: Type.Optional(Type.Boolean({ description: 'A request must give it (default false).' })),
        },
        { additionalProperties: false },
      ),
      {
        maxProperties: 16,
        description:
          'Its fields by name (a-z first, then a-z, 0-9 and _, up to 32 characters; not `type`): the only members a request’s detail of this type may have beside `type`.',
      },
    ),
    amount_field: Type.Optional(
      Type.String({ description: 'A number field: the amount an owner’s “up to” limit compares.' }),
    ),
    currency_field: Type.Optional(
      Type.String({ description: 'A string field naming the currency of `amount_field` (needs it).' }),
    ),
  },
  { $id: 'ActionType', title: 'Action type', additionalProperties: false },
);

export const ClientView = Type.Object(
  {
    id: Type.String({ examples: ['cli_7fQ2mN8pL1kJ0hG9'], description: 'The client_id.' }),
    name: Type.String({ description: 'Shown on the sign-in page.' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('inactive')], {
      description: 'inactive: disabled; its sign-ins and tokens are refused (docs/contract.md).',
    }),
    type: Type.Union([Type.Literal('confidential'), Type.Literal('public')], {
      description: 'confidential: a website with a server and a secret; public: no secret (PKCE only).',
    }),
    token_endpoint_auth_method: Type.String({
      description:
        'client_secret_post (a confidential client; HTTP Basic works as well), private_key_jwt (a confidential client that signs an RFC 7523 assertion with one of its keys) or none (a public client).',
    }),
    jwks: Nullable(
      Type.Object(
        { keys: Type.Array(Type.Object({}, { additionalProperties: true })) },
        { description: 'A private_key_jwt client’s registered public keys (JWKS); null otherwise.' },
      ),
    ),
    jwks_uri: Nullable(
      Type.String({ description: 'Where a private_key_jwt client publishes its public keys; null otherwise.' }),
    ),
    redirect_uris: Type.Array(Type.String(), { description: 'Where its sign-ins may return.' }),
    resources: Type.Array(Type.String(), { description: 'RFC 8707 resources it serves as a resource server.' }),
    scopes: Type.Array(Type.Object({ name: Type.String(), description: Type.String() }), {
      description: 'The scopes it serves at its resources, each with what it allows in words (none for a website).',
    }),
    confirmation: Type.Union([Type.Literal('auto'), Type.Literal('manual')], {
      description:
        'Whether the person at the browser confirms a sign-in: auto, it goes on once the agent authenticates; manual, the person confirms after seeing who authenticated.',
    }),
    action_types: Type.Array(Type.Ref(ActionTypeView), {
      description:
        'The actions it may ask an agent’s owner to approve (OpenID CIBA with RFC 9396 authorization details, ACTION_APPROVALS); none for most websites.',
    }),
    backchannel_token_delivery_mode: Nullable(
      Type.Union([Type.Literal('poll'), Type.Literal('ping')], {
        description:
          'How it learns an owner’s answer (CIBA): poll, it asks the token endpoint; ping, its notification endpoint is told first. poll for a website with action types that chose none; null for one that asks nothing.',
      }),
    ),
    backchannel_client_notification_endpoint: Nullable(
      Type.String({ description: 'A ping website’s https endpoint (CIBA §10.2); null otherwise.' }),
    ),
    source: Type.Union([Type.Literal('manual'), Type.Literal('dynamic'), Type.Literal('metadata_document')], {
      description:
        'manual: registered in the console, the CLI or this API; dynamic: by RFC 7591 registration; metadata_document: a Client ID Metadata Document.',
    }),
    account_id: Nullable(Type.String({ description: 'The console account that owns it; null when made by the CLI.' })),
    created_at: Time,
    last_used_at: Nullable(Time),
    previous_secret_expires_at: Nullable(
      Type.String({ format: 'date-time', description: 'Until when the secret before the last rotation works.' }),
    ),
  },
  { $id: 'Client', title: 'Client (website)' },
);
export type ClientView = Static<typeof ClientView>;

/**
 * How a client learns an owner's answer: the mode it registered, poll for one with action types
 * that chose none, null for one that asks nothing.
 *
 * @example
 * tokenDeliveryMode({ action_types: [payment], backchannel_token_delivery_mode: null }); // 'poll'
 */
export const tokenDeliveryMode = (
  client: Pick<ClientRecord, 'action_types' | 'backchannel_token_delivery_mode'>,
): 'poll' | 'ping' | null => client.backchannel_token_delivery_mode ?? (client.action_types.length > 0 ? 'poll' : null);

export function clientView(client: ClientRecord, now: number): ClientView {
  const previousLive = client.previous_secret_expires_at !== null && client.previous_secret_expires_at > now;
  return {
    id: client.id,
    name: client.name,
    status: client.status,
    type: client.token_endpoint_auth_method === 'none' ? 'public' : 'confidential',
    token_endpoint_auth_method: client.token_endpoint_auth_method,
    jwks: client.jwks === null ? null : (JSON.parse(client.jwks) as ClientView['jwks']),
    jwks_uri: client.jwks_uri,
    redirect_uris: client.redirect_uris,
    resources: client.resources,
    scopes: client.scopes,
    confirmation: client.approval,
    action_types: client.action_types,
    backchannel_token_delivery_mode: tokenDeliveryMode(client),
    backchannel_client_notification_endpoint: client.backchannel_client_notification_endpoint,
    source: client.source,
    account_id: client.account_id,
    created_at: time(client.created_at),
    last_used_at: maybeTime(client.last_used_at),
    previous_secret_expires_at: previousLive ? time(client.previous_secret_expires_at!) : null,
  };
}

export const AccountView = Type.Object(
  {
    id: Type.String({ examples: ['acc_Qm3xT9aZ1bC2dE3fG4hI'] }),
    email: Type.String({ description: 'As the person typed it; unique whatever its case.' }),
    name: Nullable(Type.String()),
    role: Type.Union([Type.Literal('admin'), Type.Literal('member')], {
      description: 'admin: reaches every account’s records; member: its own.',
    }),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
      description: 'disabled: cannot sign in to the console, and its API keys stop working.',
    }),
    email_verified: Type.Boolean(),
    has_password: Type.Boolean({ description: 'Whether it can sign in with a password (else passkeys only).' }),
    created_at: Time,
    last_sign_in_at: Nullable(Time),
  },
  { $id: 'Account', title: 'Account' },
);
export type AccountView = Static<typeof AccountView>;

export function accountView(account: AccountRecord): AccountView {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    role: account.role,
    status: account.status,
    email_verified: account.email_verified,
    has_password: account.password_hash !== null,
    created_at: time(account.created_at),
    last_sign_in_at: maybeTime(account.last_sign_in_at),
  };
}

export const GrantView = Type.Object(
  {
    id: Type.String({ examples: ['grt_Hk2mQ9xZ0aB1cD2e'] }),
    agent_id: Type.String(),
    client_id: Type.String(),
    scope: Type.String({ description: 'The scopes granted, space-separated.' }),
    model: Type.String({ description: 'The model the agent said it was when it signed in.' }),
    resource: Nullable(
      Type.String({ description: 'The RFC 8707 resource its access tokens are for; null: the client.' }),
    ),
    created_at: Time,
    revoked_at: Nullable(
      Type.String({ format: 'date-time', description: 'When it was revoked: its tokens stopped working then.' }),
    ),
  },
  { $id: 'Grant', title: 'Grant' },
);

export function grantView(grant: GrantRecord): Static<typeof GrantView> {
  return {
    id: grant.id,
    agent_id: grant.agent_id,
    client_id: grant.client_id,
    scope: grant.scope,
    model: grant.model,
    resource: grant.resource,
    created_at: time(grant.created_at),
    revoked_at: maybeTime(grant.revoked_at),
  };
}

export const RevokedView = Type.Object(
  {
    grants: Type.Integer({ description: 'Grants revoked: their refresh and access tokens stopped working.' }),
    codes: Type.Integer({ description: 'Codes issued and not yet redeemed, which no longer can be.' }),
    requests: Type.Integer({ description: 'Sign-ins in progress that ended.' }),
  },
  { $id: 'Revoked', title: 'Revoked grants' },
);

export const SignInView = Type.Object(
  {
    id: Type.String(),
    at: Time,
    outcome: Type.String({ description: 'authenticated, or the error code of the attempt (invalid_credentials, …).' }),
    seen_as: Type.Union([Type.Literal('agent'), Type.Literal('website')], {
      description:
        'agent: the whole attempt, for its agent’s owner or an admin. website: an attempt of another owner’s agent at the key’s client, as the client is told: only authenticated, approval_denied and request_contested are listed, `agent_id` only when authenticated (the `sub` it was given), and `model`, `ip` and `user_agent` null.',
    }),
    agent_id: Nullable(Type.String()),
    client_id: Nullable(Type.String()),
    client_name: Nullable(Type.String()),
    model: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    user_agent: Nullable(Type.String()),
  },
  { $id: 'SignIn', title: 'Sign-in attempt' },
);

export function signInView(record: SignInEntry): Static<typeof SignInView> {
  return {
    id: record.id,
    at: time(record.at),
    outcome: record.outcome,
    seen_as: record.seen_as,
    agent_id: record.agent_id,
    client_id: record.client_id,
    client_name: record.client_name,
    model: record.model,
    ip: record.ip,
    user_agent: record.user_agent,
  };
}

export const ActivityView = Type.Object(
  {
    id: Type.String(),
    at: Time,
    action: Type.String({ examples: ['agent.create', 'api.listAgents'] }),
    actor_id: Nullable(Type.String()),
    actor_email: Nullable(Type.String()),
    target: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    detail: Nullable(Type.String()),
  },
  { $id: 'ActivityEvent', title: 'Console activity event' },
);

export function activityView(event: ConsoleEventView): Static<typeof ActivityView> {
  return {
    id: event.id,
    at: time(event.at),
    action: event.action,
    actor_id: event.actor_id,
    actor_email: event.actor_email,
    target: event.target,
    ip: event.ip,
    detail: event.detail,
  };
}

export const ApiKeyView = Type.Object(
  {
    id: Type.String({ examples: ['key_Zx81mQ0aB2cD3eF4'] }),
    name: Type.String(),
    account_id: Type.String(),
    access: Type.Union([Type.Literal('read'), Type.Literal('write')]),
    reach: Type.Union([Type.Literal('own'), Type.Literal('all')]),
    hint: Type.String({ description: 'The key’s last four characters.' }),
    created_at: Time,
    expires_at: Time,
    last_used_at: Nullable(Time),
    last_used_ip: Nullable(Type.String()),
    revoked_at: Nullable(Time),
  },
  { $id: 'ApiKey', title: 'API key' },
);

export function apiKeyView(key: ApiKeyRecord): Static<typeof ApiKeyView> {
  return {
    id: key.id,
    name: key.name,
    account_id: key.account_id,
    access: key.access,
    reach: key.reach,
    hint: key.hint,
    created_at: time(key.created_at),
    expires_at: time(key.expires_at),
    last_used_at: maybeTime(key.last_used_at),
    last_used_ip: key.last_used_ip,
    revoked_at: maybeTime(key.revoked_at),
  };
}

export const SigningKeyView = Type.Object(
  {
    kid: Type.String({ description: 'The key’s id in the key set and in the header of every token it signs.' }),
    alg: Type.Union([Type.Literal('ES256'), Type.Literal('EdDSA'), Type.Literal('RS256')]),
    state: Type.Union([Type.Literal('next'), Type.Literal('current'), Type.Literal('retired')], {
      description:
        'next: published, signs from the next rotation; current: signs; retired: published until its last token expires.',
    }),
    created_at: Time,
    activated_at: Nullable(Time),
    retired_at: Nullable(Time),
    published_until: Nullable(Time),
  },
  { $id: 'SigningKey', title: 'Signing key' },
);

/** A signing key as the CLI and the API show it: never its private half, sealed or not. */
export function signingKeyView(key: SigningKeyRecord): Static<typeof SigningKeyView> {
  return {
    kid: key.kid,
    alg: key.alg as Static<typeof SigningKeyView>['alg'],
    state: key.state,
    created_at: time(key.created_at),
    activated_at: maybeTime(key.activated_at),
    retired_at: maybeTime(key.retired_at),
    published_until: maybeTime(key.publish_until),
  };
}

/** A page of a list: its items, and the cursor of the next page (null on the last). */
export const Page = <T extends TSchema>(item: T, title: string) =>
  Type.Object({ data: Type.Array(item), next_cursor: Nullable(Type.String()) }, { title });

// Webhooks (docs/reference/webhooks.md): delivery times are epoch milliseconds in the store.

const msTime = (ms: number) => new Date(ms).toISOString();
const maybeMsTime = (ms: number | null) => (ms === null ? null : msTime(ms));

export const WebhookView = Type.Object(
  {
    id: Type.String({ examples: ['whk_Qm3x9Kq0aZ1bC2dE'] }),
    url: Type.String(),
    description: Type.String(),
    events: Type.Array(Type.String(), { description: "The event types it receives; ['*']: all." }),
    status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
    disabled_reason: Nullable(Type.String({ description: 'Who disabled it, or why it was disabled for failing.' })),
    consecutive_failures: Type.Integer({ description: 'Messages given up on in a row since its last success.' }),
    failing_since: Nullable(Type.String({ format: 'date-time', description: 'Since when every attempt has failed.' })),
    paused_until: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'Its breaker: nothing is sent to it until then because its attempts got no answer; its deliveries wait. Once past, one delivery is tried, and an answer resumes the rest. Null while it is sent to normally.',
      }),
    ),
    paused_reason: Nullable(Type.String({ description: 'Why it is paused, while paused_until is set.' })),
    account_id: Type.String({ description: 'The admin who made it (told by mail when it is disabled for failing).' }),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'Webhook', title: 'Webhook' },
);

export function webhookView({ webhook, events }: WebhookWithEvents): Static<typeof WebhookView> {
  return {
    id: webhook.id,
    url: webhook.url,
    description: webhook.description,
    events,
    status: webhook.status,
    disabled_reason: webhook.disabled_reason,
    consecutive_failures: webhook.consecutive_failures,
    failing_since: maybeMsTime(webhook.failing_since),
    paused_until: maybeMsTime(webhook.paused_until),
    paused_reason: webhook.paused_reason,
    account_id: webhook.account_id,
    created_at: time(webhook.created_at),
    updated_at: time(webhook.updated_at),
  };
}

export const DeliveryView = Type.Object(
  {
    message_id: Type.String({ description: 'The webhook-id header: the same for every attempt and endpoint.' }),
    event_type: Type.String(),
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('delivering'),
      Type.Literal('delivered'),
      Type.Literal('failed'),
    ]),
    attempts: Type.Integer(),
    next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'When it is tried next (pending).' })),
    last_status_code: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    delivered_at: Nullable(Type.String({ format: 'date-time' })),
    created_at: Type.String({ format: 'date-time' }),
    payload: Type.Unknown({ description: 'The body sent: {type, timestamp, data}.' }),
    attempt_log: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        at: Type.String({ format: 'date-time' }),
        duration_ms: Type.Integer(),
        status_code: Nullable(Type.Integer({ description: "The receiver's answer; null when there was none." })),
        error: Nullable(
          Type.String({
            description:
              'What went wrong, in words, with what fixes it (the receiver’s HTTP status, an untrusted certificate, a refused connection, …); null when it was delivered.',
          }),
        ),
        request_headers: Nullable(
          Type.Record(Type.String(), Type.String(), {
            description:
              'The headers this attempt was sent with: webhook-id, webhook-timestamp, webhook-signature, content-type, user-agent (the body is `payload`). Null for attempts logged before they were kept.',
          }),
        ),
      }),
    ),
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery' },
);

export function deliveryView({ delivery, attempts }: DeliveryWithAttempts): Static<typeof DeliveryView> {
  return {
    message_id: delivery.message_id,
    event_type: delivery.event_type,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' ? msTime(delivery.next_attempt_at) : null,
    last_status_code: delivery.last_status_code,
    last_error: delivery.last_error,
    delivered_at: maybeMsTime(delivery.delivered_at),
    created_at: msTime(delivery.created_at),
    payload: JSON.parse(delivery.payload),
    attempt_log: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      at: msTime(attempt.at),
      duration_ms: attempt.duration_ms,
      status_code: attempt.status_code,
      error: attempt.error,
      request_headers: attempt.request_headers === null ? null : JSON.parse(attempt.request_headers),
    })),
  };
}

export const WebhookEventTypeView = Type.Object(
  { type: Type.String(), description: Type.String() },
  { $id: 'WebhookEventType', title: 'WebhookEventType' },
);
