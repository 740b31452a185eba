/**
 * Schema migrations, in SQL that SQLite and PostgreSQL both accept. Versions keep the names
 * they had under Kysely's Migrator, whose history the drivers adopt.
 */
import type { Migration } from './driver.ts';

export const migrations: Migration[] = [
  {
    version: '0001_initial',
    statements: [
      `CREATE TABLE clients (
        id varchar(64) PRIMARY KEY,
        name varchar(200) NOT NULL,
        secret_sealed varchar(400) NOT NULL,
        redirect_uris text NOT NULL,
        status varchar(16) NOT NULL,
        approval varchar(16) NOT NULL,
        created_at bigint NOT NULL
      )`,
      // owner_email_verified is 0/1 rather than boolean: one representation on both engines.
      `CREATE TABLE agents (
        id varchar(64) PRIMARY KEY,
        secret_digest varchar(64) NOT NULL,
        name varchar(200) NOT NULL,
        owner_email varchar(320) NOT NULL,
        owner_name varchar(200),
        owner_email_verified integer NOT NULL,
        status varchar(16) NOT NULL,
        created_at bigint NOT NULL,
        last_used_at bigint
      )`,
      `CREATE TABLE authorization_requests (
        id varchar(64) PRIMARY KEY,
        client_id varchar(64) NOT NULL,
        redirect_uri text NOT NULL,
        scope varchar(200) NOT NULL,
        state text NOT NULL,
        code_challenge varchar(64) NOT NULL,
        nonce text,
        browser_digest varchar(64) NOT NULL,
        status varchar(16) NOT NULL,
        error varchar(64),
        error_description text,
        agent_id varchar(64),
        model varchar(200),
        authenticated_at bigint,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL
      )`,
      'CREATE INDEX authorization_requests_expires_at ON authorization_requests (expires_at)',
      `CREATE TABLE authorization_codes (
        digest varchar(64) PRIMARY KEY,
        request_id varchar(64) NOT NULL,
        client_id varchar(64) NOT NULL,
        redirect_uri text NOT NULL,
        scope varchar(200) NOT NULL,
        code_challenge varchar(64) NOT NULL,
        nonce text,
        agent_id varchar(64) NOT NULL,
        model varchar(200) NOT NULL,
        auth_time bigint NOT NULL,
        expires_at bigint NOT NULL,
        redeemed_at bigint,
        grant_id varchar(64)
      )`,
      'CREATE INDEX authorization_codes_expires_at ON authorization_codes (expires_at)',
      `CREATE TABLE grants (
        id varchar(64) PRIMARY KEY,
        client_id varchar(64) NOT NULL,
        agent_id varchar(64) NOT NULL,
        scope varchar(200) NOT NULL,
        model varchar(200) NOT NULL,
        auth_time bigint NOT NULL,
        created_at bigint NOT NULL,
        revoked_at bigint
      )`,
      `CREATE TABLE refresh_tokens (
        digest varchar(64) PRIMARY KEY,
        grant_id varchar(64) NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      )`,
      'CREATE INDEX refresh_tokens_grant_id ON refresh_tokens (grant_id)',
      'CREATE INDEX refresh_tokens_expires_at ON refresh_tokens (expires_at)',
      `CREATE TABLE access_tokens (
        jti varchar(64) PRIMARY KEY,
        grant_id varchar(64) NOT NULL,
        client_id varchar(64) NOT NULL,
        scope varchar(200) NOT NULL,
        expires_at bigint NOT NULL,
        revoked_at bigint
      )`,
      'CREATE INDEX access_tokens_expires_at ON access_tokens (expires_at)',
      `CREATE TABLE audit_events (
        id varchar(40) PRIMARY KEY,
        at bigint NOT NULL,
        agent_id varchar(256),
        request_id varchar(256),
        client_id varchar(64),
        model varchar(200),
        ip varchar(64),
        user_agent varchar(512),
        outcome varchar(64) NOT NULL
      )`,
      'CREATE INDEX audit_events_agent_at ON audit_events (agent_id, at)',
      'CREATE INDEX audit_events_at ON audit_events (at)',
    ],
  },
  {
    // A rotated agent or client secret may stay valid for a grace period (zero-downtime
    // rotation). One ADD COLUMN per statement: SQLite accepts no more.
    version: '0002_secret_rotation_grace',
    statements: [
      'ALTER TABLE agents ADD COLUMN previous_secret_digest varchar(64)',
      'ALTER TABLE agents ADD COLUMN previous_secret_expires_at bigint',
      'ALTER TABLE clients ADD COLUMN previous_secret_sealed varchar(400)',
      'ALTER TABLE clients ADD COLUMN previous_secret_expires_at bigint',
    ],
  },
  {
    // The purge deletes a grant once no token refers to it; without this index each candidate
    // grant scanned access_tokens (2,000 grants against 100,000 tokens: 10 s on the event loop).
    version: '0003_access_tokens_grant_id',
    statements: ['CREATE INDEX access_tokens_grant_id ON access_tokens (grant_id)'],
  },
  {
    // login_hint binds a request to one agent (docs/design.md §5, cross-device defences); the
    // grants of one agent or one client are revoked together (incident response).
    version: '0004_login_hint_and_grant_owners',
    statements: [
      'ALTER TABLE authorization_requests ADD COLUMN login_hint varchar(128)',
      'CREATE INDEX grants_agent_id ON grants (agent_id)',
      'CREATE INDEX grants_client_id ON grants (client_id)',
    ],
  },
  {
    // The console (docs/design.md §11): accounts of people, their passkeys and sessions, one-time
    // links (setup, invitation, email verification), WebAuthn challenges, the audit of console
    // actions, and which account owns an agent or a client (NULL for those made with the CLI).
    version: '0005_console',
    statements: [
      `CREATE TABLE accounts (
        id varchar(64) PRIMARY KEY,
        email varchar(320) NOT NULL,
        email_key varchar(320) NOT NULL,
        name varchar(200),
        role varchar(16) NOT NULL,
        status varchar(16) NOT NULL,
        email_verified integer NOT NULL,
        password_hash varchar(200),
        created_at bigint NOT NULL,
        last_sign_in_at bigint
      )`,
      'CREATE UNIQUE INDEX accounts_email_key ON accounts (email_key)',
      `CREATE TABLE passkeys (
        id varchar(512) PRIMARY KEY,
        account_id varchar(64) NOT NULL,
        public_key text NOT NULL,
        counter bigint NOT NULL,
        transports varchar(200),
        name varchar(100) NOT NULL,
        created_at bigint NOT NULL,
        last_used_at bigint
      )`,
      'CREATE INDEX passkeys_account_id ON passkeys (account_id)',
      `CREATE TABLE console_sessions (
        id varchar(64) PRIMARY KEY,
        digest varchar(64) NOT NULL,
        account_id varchar(64) NOT NULL,
        created_at bigint NOT NULL,
        last_seen_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        ip varchar(64),
        user_agent varchar(512),
        method varchar(16) NOT NULL
      )`,
      'CREATE UNIQUE INDEX console_sessions_digest ON console_sessions (digest)',
      'CREATE INDEX console_sessions_account_id ON console_sessions (account_id)',
      `CREATE TABLE account_links (
        digest varchar(64) PRIMARY KEY,
        purpose varchar(16) NOT NULL,
        account_id varchar(64),
        email varchar(320),
        role varchar(16),
        created_by varchar(64),
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      )`,
      `CREATE TABLE webauthn_challenges (
        id varchar(64) PRIMARY KEY,
        challenge varchar(128) NOT NULL,
        account_id varchar(64),
        expires_at bigint NOT NULL
      )`,
      `CREATE TABLE console_events (
        id varchar(40) PRIMARY KEY,
        at bigint NOT NULL,
        actor_id varchar(64),
        action varchar(64) NOT NULL,
        target varchar(256),
        ip varchar(64),
        detail varchar(512)
      )`,
      'CREATE INDEX console_events_at ON console_events (at)',
      'ALTER TABLE agents ADD COLUMN account_id varchar(64)',
      'CREATE INDEX agents_account_id ON agents (account_id)',
      'ALTER TABLE clients ADD COLUMN account_id varchar(64)',
      'CREATE INDEX clients_account_id ON clients (account_id)',
      'CREATE INDEX audit_events_client_at ON audit_events (client_id, at)',
    ],
  },
  {
    // MCP clients and resource servers (docs/design.md §13): how a client authenticates at the
    // token endpoint ('none' for a public client, whose secret_sealed is then ''), where its
    // record came from (the CLI or console, a Client ID Metadata Document, dynamic
    // registration), the digest of its registration access token (RFC 7592), the resources it
    // serves as a resource server (it may introspect tokens issued for them), and the resource
    // (RFC 8707) a request, a code and a grant are bound to. A client_id may now be an https
    // URL (a metadata document's), so the columns holding one are widened.
    version: '0006_public_clients_and_resources',
    statements: [
      "ALTER TABLE clients ADD COLUMN token_endpoint_auth_method varchar(32) NOT NULL DEFAULT 'client_secret_post'",
      "ALTER TABLE clients ADD COLUMN source varchar(32) NOT NULL DEFAULT 'manual'",
      'ALTER TABLE clients ADD COLUMN registration_token_digest varchar(64)',
      "ALTER TABLE clients ADD COLUMN resources text NOT NULL DEFAULT '[]'",
      'ALTER TABLE authorization_requests ADD COLUMN resource varchar(1024)',
      'ALTER TABLE authorization_codes ADD COLUMN resource varchar(1024)',
      'ALTER TABLE grants ADD COLUMN resource varchar(1024)',
    ],
    postgresOnly: [
      'ALTER TABLE clients ALTER COLUMN id TYPE varchar(512)',
      'ALTER TABLE authorization_requests ALTER COLUMN client_id TYPE varchar(512)',
      'ALTER TABLE authorization_codes ALTER COLUMN client_id TYPE varchar(512)',
      'ALTER TABLE grants ALTER COLUMN client_id TYPE varchar(512)',
      'ALTER TABLE access_tokens ALTER COLUMN client_id TYPE varchar(512)',
      'ALTER TABLE audit_events ALTER COLUMN client_id TYPE varchar(512)',
      'ALTER TABLE console_events ALTER COLUMN target TYPE varchar(512)',
    ],
  },
  {
    // A write unit whose steps are independent runs on PostgreSQL as one statement
    // (docs/design.md §9): when a guarded step changes no row, the statement calls this, and
    // the error undoes the whole statement. SQLite runs units in its own transactions.
    version: '0007_void_unit',
    statements: [],
    postgresOnly: [
      `CREATE OR REPLACE FUNCTION agentauth_void_unit() RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a guarded step changed no row: the write unit is void' USING ERRCODE = 'AA001';
END
$$`,
    ],
  },
  {
    // When a self-registered client (metadata document, dynamic registration) was last used, to
    // within a day; NULL for manual clients, which are never purged (docs/design.md §9 Purge).
    // Existing self-registered clients count as used when they were created. The index serves
    // the purge's search for the unused ones.
    version: '0008_client_last_used_at',
    statements: [
      'ALTER TABLE clients ADD COLUMN last_used_at bigint',
      "UPDATE clients SET last_used_at = created_at WHERE source <> 'manual'",
      'CREATE INDEX clients_last_used_at ON clients (last_used_at)',
    ],
  },
  {
    // A setup or invitation link can be revoked before it is used (docs/design.md §11): by its
    // creator, by an admin, or because its creator's account was disabled. The index serves the
    // list of a person's outstanding links and their end when the account is disabled.
    version: '0009_account_link_revocation',
    statements: [
      'ALTER TABLE account_links ADD COLUMN revoked_at bigint',
      'CREATE INDEX account_links_created_by ON account_links (created_by)',
    ],
  },
  {
    // When the person behind a console session last proved who they are (sign-in, or a fresh
    // password or passkey): adding or removing a sign-in method needs it recent (docs/design.md §11).
    version: '0010_console_session_authenticated_at',
    statements: [
      'ALTER TABLE console_sessions ADD COLUMN authenticated_at bigint NOT NULL DEFAULT 0',
      'UPDATE console_sessions SET authenticated_at = created_at',
    ],
  },
  {
    // What a console form post showed once (a new secret, a one-time link) travels to the page
    // its 303 leads to as a row bound to the session, deleted by the first read
    // (docs/design.md §11, "Shown once"); the value is sealed, and the row lives minutes.
    version: '0011_console_flashes',
    statements: [
      `CREATE TABLE console_flashes (
        id varchar(64) PRIMARY KEY,
        session_id varchar(64) NOT NULL,
        path varchar(512) NOT NULL,
        sealed text NOT NULL,
        expires_at bigint NOT NULL
      )`,
      'CREATE INDEX console_flashes_session_path ON console_flashes (session_id, path)',
    ],
  },
  {
    // The management API's keys (docs/design.md §15): stored as digests, found by digest; the id
    // names a key in lists and URLs. An unfinished or finished idempotent creation answers its
    // retries from the second table (its body sealed: a creation's answer may carry a secret).
    version: '0012_api_keys',
    statements: [
      `CREATE TABLE api_keys (
        id varchar(64) PRIMARY KEY,
        digest varchar(64) NOT NULL UNIQUE,
        account_id varchar(64) NOT NULL,
        name varchar(200) NOT NULL,
        access varchar(16) NOT NULL,
        reach varchar(16) NOT NULL,
        hint varchar(16) NOT NULL,
        created_at bigint NOT NULL,
        created_by varchar(64),
        expires_at bigint NOT NULL,
        last_used_at bigint,
        last_used_ip varchar(64),
        revoked_at bigint
      )`,
      'CREATE INDEX api_keys_account ON api_keys (account_id)',
      `CREATE TABLE api_idempotency (
        key_id varchar(64) NOT NULL,
        idempotency_key varchar(255) NOT NULL,
        fingerprint varchar(64) NOT NULL,
        status integer,
        sealed text,
        created_at bigint NOT NULL,
        PRIMARY KEY (key_id, idempotency_key)
      )`,
      'CREATE INDEX api_idempotency_created_at ON api_idempotency (created_at)',
    ],
  },
  {
    // Signed webhooks (docs/design.md §15). Endpoints, made by admins, with their signing secret
    // sealed like client secrets; what each subscribes to, one row per event type ('*': all), so
    // an event finds its endpoints by index; the outbox of deliveries, one row per message and
    // endpoint, written in the same unit as the event and claimed by one node at a time (a lease);
    // one row per HTTP attempt for the delivery log. Delivery times are epoch milliseconds (a
    // sign-in's webhook is due within a second); the other times are seconds as elsewhere. A
    // request that expired while pending or authenticated is announced once (expiry_announced_at).
    version: '0013_webhooks',
    statements: [
      `CREATE TABLE webhook_endpoints (
        id varchar(64) PRIMARY KEY,
        account_id varchar(64) NOT NULL,
        url varchar(2048) NOT NULL,
        description varchar(500) NOT NULL,
        secret_sealed varchar(400) NOT NULL,
        status varchar(16) NOT NULL,
        disabled_reason varchar(500),
        consecutive_failures integer NOT NULL,
        failing_since bigint,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL
      )`,
      `CREATE TABLE webhook_subscriptions (
        endpoint_id varchar(64) NOT NULL,
        event_type varchar(64) NOT NULL,
        PRIMARY KEY (endpoint_id, event_type)
      )`,
      'CREATE INDEX webhook_subscriptions_event_type ON webhook_subscriptions (event_type, endpoint_id)',
      `CREATE TABLE webhook_deliveries (
        message_id varchar(64) NOT NULL,
        endpoint_id varchar(64) NOT NULL,
        event_type varchar(64) NOT NULL,
        payload text NOT NULL,
        status varchar(16) NOT NULL,
        attempts integer NOT NULL,
        next_attempt_at bigint NOT NULL,
        lease_until bigint,
        lease_owner varchar(64),
        last_status_code integer,
        last_error varchar(500),
        delivered_at bigint,
        created_at bigint NOT NULL,
        PRIMARY KEY (message_id, endpoint_id)
      )`,
      'CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at)',
      'CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, message_id)',
      `CREATE TABLE webhook_attempts (
        endpoint_id varchar(64) NOT NULL,
        message_id varchar(64) NOT NULL,
        attempt integer NOT NULL,
        at bigint NOT NULL,
        duration_ms integer NOT NULL,
        status_code integer,
        error varchar(500),
        PRIMARY KEY (endpoint_id, message_id, attempt)
      )`,
      'ALTER TABLE authorization_requests ADD COLUMN expiry_announced_at bigint',
    ],
  },
  {
    // The shared throttles' counters on PostgreSQL (rate-limiter-flexible's schema), made here under
    // the migration lock: nodes starting together each created it themselves, and PostgreSQL's
    // CREATE TABLE IF NOT EXISTS is not safe against itself ("type … already exists").
    version: '0014_throttle_counters',
    statements: [],
    postgresOnly: [
      'CREATE TABLE IF NOT EXISTS auth_failure_counters (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)',
    ],
  },
  {
    // Owners in control (docs/design.md §16): an agent's policy (JSON, NULL for the default: any
    // website, as SPEC.md says), the owner approvals a policy asks for, and the request's link to
    // the approval it awaits (NULL on every request no policy holds back).
    version: '0015_owner_control',
    statements: [
      'ALTER TABLE agents ADD COLUMN policy text',
      'ALTER TABLE authorization_requests ADD COLUMN approval_id varchar(64)',
      `CREATE TABLE approvals (
        id varchar(64) PRIMARY KEY,
        request_id varchar(64) NOT NULL UNIQUE,
        agent_id varchar(64) NOT NULL,
        client_id varchar(512) NOT NULL,
        model varchar(200) NOT NULL,
        scope varchar(200) NOT NULL,
        ip varchar(64),
        user_agent varchar(512),
        status varchar(16) NOT NULL,
        decision varchar(16),
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        decided_at bigint,
        decided_by varchar(64)
      )`,
      'CREATE INDEX approvals_agent_status ON approvals (agent_id, status)',
      'CREATE INDEX approvals_status_expires_at ON approvals (status, expires_at)',
    ],
  },
  {
    // Key-bound agents (docs/design.md §16): the public JWK an agent proves itself with (JSON
    // text; NULL for an agent with a secret) and its RFC 7638 thumbprint; the assertion ids
    // (jti) already used, each kept until its assertion expires, so a replay is refused on
    // every node. The primary key is the single-use check: a second insert of the pair fails.
    version: '0016_agent_keys',
    statements: [
      'ALTER TABLE agents ADD COLUMN public_jwk text',
      'ALTER TABLE agents ADD COLUMN key_thumbprint varchar(64)',
      `CREATE TABLE agent_assertions (
        agent_id varchar(64) NOT NULL,
        jti varchar(128) NOT NULL,
        expires_at bigint NOT NULL,
        PRIMARY KEY (agent_id, jti)
      )`,
      'CREATE INDEX agent_assertions_expires_at ON agent_assertions (expires_at)',
    ],
  },
  {
    // Webhooks, hardened (issue 35; docs/design.md §15). An endpoint's breaker, shared by every
    // node: attempts in a row that got no answer (timed out, could not connect), and while it is
    // paused until when and why (NULL: sending). A delivery announcing the expiry of a request no
    // agent authenticated carries that request's expiry: it is purged with the request
    // (PURGE_UNAUTHENTICATED_AFTER), delivered or not, so a flood of abandoned /authorize
    // requests cannot fill the outbox for WEBHOOK_RETENTION.
    version: '0017_webhook_breaker',
    statements: [
      'ALTER TABLE webhook_endpoints ADD COLUMN unanswered_attempts integer NOT NULL DEFAULT 0',
      'ALTER TABLE webhook_endpoints ADD COLUMN paused_until bigint',
      'ALTER TABLE webhook_endpoints ADD COLUMN paused_reason varchar(500)',
      'ALTER TABLE webhook_deliveries ADD COLUMN request_expires_at bigint',
      'CREATE INDEX webhook_deliveries_request_expires_at ON webhook_deliveries (request_expires_at) WHERE request_expires_at IS NOT NULL',
    ],
  },
  {
    // Each record the management API guards with If-Match counts its changes (docs/design.md §17):
    // a guarded write sets version = version + 1 only WHERE version is still the one its
    // precondition was checked on, so of concurrent writers with one tag exactly one wins. The
    // policy's read-modify-write changes (a website added or removed) compare and set it too.
    // Existing rows start at 1.
    version: '0018_record_versions',
    statements: [
      'ALTER TABLE agents ADD COLUMN version integer NOT NULL DEFAULT 1',
      'ALTER TABLE clients ADD COLUMN version integer NOT NULL DEFAULT 1',
      'ALTER TABLE accounts ADD COLUMN version integer NOT NULL DEFAULT 1',
      'ALTER TABLE webhook_endpoints ADD COLUMN version integer NOT NULL DEFAULT 1',
    ],
  },
  {
    // Concurrent refresh (docs/design.md §6, REFRESH_TOKEN_REUSE_WINDOW): a rotated refresh token
    // keeps, for the window, its successor pair sealed under the server secret and the rotated
    // token itself (never in clear), and the successor refresh token's digest, so a repeat
    // presentation can tell whether the successor has been rotated since. The purge forgets both
    // once the window is over; the partial index finds the few rows that still hold one. It names
    // no column a rotation without a window writes (used_at): an index on used_at made every
    // rotation a non-HOT update on PostgreSQL, about 300 more WAL bytes per refresh.
    version: '0019_refresh_successors',
    statements: [
      'ALTER TABLE refresh_tokens ADD COLUMN successor text',
      'ALTER TABLE refresh_tokens ADD COLUMN successor_digest varchar(64)',
      'CREATE INDEX refresh_tokens_successor ON refresh_tokens (successor_digest) WHERE successor IS NOT NULL',
    ],
  },
  {
    // Scopes of resource servers (issue 36; docs/design.md §13): the scopes a resource-server
    // client serves, with a description each (JSON text, '[]' for every other client). A request
    // may now name them beside the standard ones, so its scope may be longer when it names a
    // resource (authorization-request/validation.ts): the columns holding one are widened on
    // PostgreSQL (SQLite does not enforce a varchar's length).
    version: '0020_resource_scopes',
    statements: ["ALTER TABLE clients ADD COLUMN scopes text NOT NULL DEFAULT '[]'"],
    postgresOnly: [
      'ALTER TABLE authorization_requests ALTER COLUMN scope TYPE varchar(1000)',
      'ALTER TABLE authorization_codes ALTER COLUMN scope TYPE varchar(1000)',
      'ALTER TABLE grants ALTER COLUMN scope TYPE varchar(1000)',
      'ALTER TABLE access_tokens ALTER COLUMN scope TYPE varchar(1000)',
      'ALTER TABLE approvals ALTER COLUMN scope TYPE varchar(1000)',
    ],
  },
  {
    // Clients that sign with keys (RFC 7523 private_key_jwt, docs/design.md §18): the public key
    // set a client registered (JWKS as JSON text) or the https URL it publishes one at (jwks_uri);
    // NULL for clients with a secret or none. Used assertion ids become one store for agents' and
    // clients' assertions, keyed by who signed (an agent_id, or a client_id of up to 512
    // characters): a replay is refused on every node, whoever signed.
    version: '0021_client_keys',
    statements: [
      'ALTER TABLE clients ADD COLUMN jwks text',
      'ALTER TABLE clients ADD COLUMN jwks_uri varchar(2048)',
      'ALTER TABLE agent_assertions RENAME TO used_assertions',
      'ALTER TABLE used_assertions RENAME COLUMN agent_id TO signer',
      'DROP INDEX agent_assertions_expires_at',
      'CREATE INDEX used_assertions_expires_at ON used_assertions (expires_at)',
    ],
    postgresOnly: ['ALTER TABLE used_assertions ALTER COLUMN signer TYPE varchar(512)'],
  },
  {
    // Signing keys (docs/design.md §19, TOKEN_SIGNING_ALG): key pairs the nodes share, the private
    // half sealed under the server secret. At most one key is `current` and one `next` (the
    // partial unique indexes), so of two nodes bootstrapping or rotating at once one wins.
    version: '0022_signing_keys',
    statements: [
      `CREATE TABLE signing_keys (
        kid varchar(64) PRIMARY KEY,
        alg varchar(16) NOT NULL,
        state varchar(16) NOT NULL,
        public_jwk text NOT NULL,
        private_key_sealed text NOT NULL,
        created_at bigint NOT NULL,
        activated_at bigint,
        retired_at bigint,
        publish_until bigint
      )`,
      "CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (state) WHERE state = 'current'",
      "CREATE UNIQUE INDEX signing_keys_one_next ON signing_keys (state) WHERE state = 'next'",
    ],
  },
  {
    // The signed request of each webhook attempt (issue 38; docs/design.md §15): its headers as
    // JSON, for the delivery log; the body is the delivery's payload. About 250 bytes an attempt,
    // purged with the delivery.
    version: '0023_webhook_attempt_headers',
    statements: ['ALTER TABLE webhook_attempts ADD COLUMN request_headers text'],
  },
  {
    // Action types (issue 39; docs/design.md §21): the actions a website may ask an agent's owner
    // to approve (RFC 9396 authorization details types, JSON text; NULL for none), and how it
    // learns the answer (OpenID CIBA: 'poll' or 'ping', NULL for a client that asks nothing; one
    // with types and no mode polls), with the https endpoint a ping goes to.
    version: '0024_client_action_types',
    statements: [
      'ALTER TABLE clients ADD COLUMN action_types text',
      'ALTER TABLE clients ADD COLUMN backchannel_token_delivery_mode varchar(8)',
      'ALTER TABLE clients ADD COLUMN backchannel_client_notification_endpoint varchar(2000)',
    ],
  },
  {
    // Owners approve actions (docs/design.md §21, ACTION_APPROVALS): a website's action request
    // (OpenID CIBA), found by the digest of its auth_req_id (never the value itself), with the
    // RFC 9396 authorization details as JSON text and the ping's notification token sealed like
    // client secrets. The slow_down interval and the next poll allowed are stored, so every node
    // agrees. The ping is an outbox in the row itself: notify_at (epoch milliseconds) is set in
    // the unit that decides or expires the request, and a node claims it under a lease, so it is
    // sent once by one node and survives a node's end. An approval now has a kind ('sign_in' for
    // every row so far, or 'action'); an access token issued for an action names its request.
    version: '0025_action_requests',
    statements: [
      `CREATE TABLE action_requests (
        id varchar(64) PRIMARY KEY,
        auth_req_id_digest varchar(64) NOT NULL UNIQUE,
        client_id varchar(512) NOT NULL,
        agent_id varchar(64) NOT NULL,
        grant_id varchar(64) NOT NULL,
        scope varchar(1000) NOT NULL,
        authorization_details text NOT NULL,
        binding_message varchar(400),
        delivery_mode varchar(8) NOT NULL,
        notification_token_sealed text,
        notification_endpoint varchar(2000),
        status varchar(16) NOT NULL,
        answered_by varchar(16),
        decided_at bigint,
        decided_by varchar(64),
        poll_interval integer NOT NULL,
        next_poll_at bigint NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        approval_id varchar(64),
        ip varchar(64),
        notify_at bigint,
        notify_attempts integer NOT NULL DEFAULT 0,
        notify_lease_until bigint,
        notified_at bigint
      )`,
      'CREATE INDEX action_requests_agent_status ON action_requests (agent_id, status, expires_at)',
      'CREATE INDEX action_requests_expires_at ON action_requests (status, expires_at)',
      'CREATE INDEX action_requests_notify_at ON action_requests (notify_at) WHERE notify_at IS NOT NULL',
      "ALTER TABLE approvals ADD COLUMN kind varchar(16) NOT NULL DEFAULT 'sign_in'",
      'ALTER TABLE access_tokens ADD COLUMN action_request_id varchar(64)',
    ],
  },
];
