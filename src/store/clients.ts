/**
 * Clients (docs/design.md §9): the websites agents sign in to, registered by the CLI, the console,
 * a Client ID Metadata Document or dynamic registration; their records, rows and SQL, one text
 * for SQLite and PostgreSQL. Deleting one revokes its grants in the same unit (rows.ts
 * deleteWithGrants, the shape agents share). The joined reads of requests and tokens take its
 * columns from the tables here.
 */
import type { Driver } from './driver.ts';
import { columnsOf, type JoinedRead, type Table } from './joined.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { deleteWithGrants, insert, type ListQuery, pageRows, type RevokedGrants, update, won } from './rows.ts';

/** An inactive client's sign-ins and tokens are refused. */
export type ClientStatus = 'active' | 'inactive';
/** Whether a person confirms each sign-in in the browser (manual) or the agent's authentication suffices (auto). */
export type Approval = 'auto' | 'manual';
/**
 * How a client authenticates at the token endpoint: with its secret, with an assertion signed by
 * one of its keys (RFC 7523 private_key_jwt), or not at all (a public client, RFC 6749 §2.1).
 */
export type ClientAuthMethod = 'client_secret_post' | 'private_key_jwt' | 'none';
/** Where a client's record came from: the CLI or the console, a Client ID Metadata Document, or dynamic registration (RFC 7591). */
export type ClientSource = 'manual' | 'metadata_document' | 'dynamic';
/** One scope a resource server serves, and what it allows in words a person reads (docs/design.md §13). */
export interface ResourceScope {
  /** The scope value (RFC 6749 §3.3 scope-token), e.g. notes:read. */
  name: string;
  /** What it allows, in plain text: "Read your notes". */
  description: string;
}

/** One field of an action type: the JSON type of its value, and whether a request must give it. */
export interface ActionField {
  type: 'string' | 'number' | 'integer' | 'boolean';
  required?: boolean;
}

/**
 * One action a website may ask an agent's owner to approve (an RFC 9396 authorization details
 * type): its name, its fields and how it reads in words (docs/design.md §21). The rules are
 * src/domain/authorization-details.ts.
 */
export interface ActionType {
  /** The type's name, e.g. 'payment': 1–64 characters of [A-Za-z0-9_.:/-]. */
  type: string;
  /** How a detail of this type reads, naming its fields in braces: 'Pay {amount} {currency} to {payee}'. */
  description: string;
  fields: Record<string, ActionField>;
  /** A number field a policy's "up to" compares. */
  amount_field?: string;
  /** A string field naming the amount's currency. */
  currency_field?: string;
}

/** A client: a website (or app) that agents sign in to, its credentials, redirect URIs and resources. */
export interface ClientRecord {
  /** Issued by the server, or the https URL of the client's metadata document. */
  id: string;
  name: string;
  /** The encrypted secret; '' for a public client, which has none. */
  secret_sealed: string;
  /** The secret before the last rotation, still accepted until previous_secret_expires_at. */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: number | null;
  redirect_uris: string[];
  status: ClientStatus;
  approval: Approval;
  created_at: number;
  /** The console account that owns it; null for clients registered with the CLI. */
  account_id: string | null;
  token_endpoint_auth_method: ClientAuthMethod;
  source: ClientSource;
  /** SHA-256 of the registration access token of a dynamically registered client (RFC 7592). */
  registration_token_digest: string | null;
  /** The resources (RFC 8707) this client serves as a resource server: it may introspect tokens issued for them. */
  resources: string[];
  /** The scopes a resource server serves at each of its resources (none for any other client). */
  scopes: ResourceScope[];
  /**
   * When a self-registered client (metadata document, dynamic) was last used, to within a day;
   * the purge deletes one unused for long (docs/design.md §9). Null for manual clients.
   */
  last_used_at: number | null;
  /** How many times it was changed (1 when made): what If-Match compares and sets (rows.ts update). */
  version: number;
  /** A private_key_jwt client's public key set (JWKS) as JSON text, when it registered one; else null. */
  jwks: string | null;
  /** The https URL where a private_key_jwt client publishes its key set, when it gave one; else null. */
  jwks_uri: string | null;
  /** The actions it may ask an agent's owner to approve (RFC 9396 authorization details types); [] for none. */
  action_types: ActionType[];
  /**
   * How it learns an owner's answer (OpenID CIBA): by polling the token endpoint, or pinged at
   * its notification endpoint; null for a client that registered neither (one with action types
   * then polls).
   */
  backchannel_token_delivery_mode: BackchannelTokenDeliveryMode | null;
  /** A ping client's https endpoint (CIBA §10.2); else null. */
  backchannel_client_notification_endpoint: string | null;
}

/** How a client learns the answer to its action requests (OpenID CIBA Core 1.0 §5). */
export type BackchannelTokenDeliveryMode = 'poll' | 'ping';

/** The fields of a client that asks owners to approve actions, which every other client leaves out. */
type ActionClientFields =
  | 'action_types'
  | 'backchannel_token_delivery_mode'
  | 'backchannel_client_notification_endpoint';

/** A client as it is inserted: a client that serves no scopes and asks for no actions may leave them out. */
export type NewClientRecord = Omit<ClientRecord, 'scopes' | ActionClientFields> &
  Partial<Pick<ClientRecord, 'scopes' | ActionClientFields>>;

/** What a change of a client may set. */
export type ClientPatch = Partial<
  Pick<
    ClientRecord,
    | 'status'
    | 'secret_sealed'
    | 'previous_secret_sealed'
    | 'previous_secret_expires_at'
    | 'name'
    | 'redirect_uris'
    | 'approval'
    | 'resources'
    | 'scopes'
    | 'token_endpoint_auth_method'
    | 'registration_token_digest'
    | 'last_used_at'
    | 'jwks'
    | 'jwks_uri'
    | ActionClientFields
  >
>;

/** A client as its row holds it: the lists as JSON text (the action types NULL for none). */
type ClientRow = Omit<ClientRecord, 'redirect_uris' | 'resources' | 'scopes' | 'action_types'> & {
  redirect_uris: string;
  resources: string;
  scopes: string;
  action_types: string | null;
};
/** A client record from its row. */
const toClient = (row: ClientRow): ClientRecord => ({
  ...row,
  redirect_uris: JSON.parse(row.redirect_uris) as string[],
  resources: JSON.parse(row.resources) as string[],
  scopes: JSON.parse(row.scopes) as ResourceScope[],
  action_types: row.action_types === null ? [] : (JSON.parse(row.action_types) as ActionType[]),
});
/** The lists of a client record as their JSON columns. */
const clientColumns = <T extends Partial<ClientRecord>>(client: T) => ({
  ...client,
  ...(client.redirect_uris === undefined ? {} : { redirect_uris: JSON.stringify(client.redirect_uris) }),
  ...(client.resources === undefined ? {} : { resources: JSON.stringify(client.resources) }),
  ...(client.scopes === undefined ? {} : { scopes: JSON.stringify(client.scopes) }),
  ...(client.action_types === undefined
    ? {}
    : { action_types: client.action_types.length === 0 ? null : JSON.stringify(client.action_types) }),
});
/** Every column of a client, for the joined reads. */
const CLIENT_COLUMNS = columnsOf<ClientRow>()([
  'id',
  'name',
  'secret_sealed',
  'previous_secret_sealed',
  'previous_secret_expires_at',
  'redirect_uris',
  'status',
  'approval',
  'created_at',
  'account_id',
  'token_endpoint_auth_method',
  'source',
  'registration_token_digest',
  'resources',
  'scopes',
  'last_used_at',
  'version',
  'jwks',
  'jwks_uri',
  'action_types',
  'backchannel_token_delivery_mode',
  'backchannel_client_notification_endpoint',
]);
/** A request's client in a joined read (requests.ts). */
export const CLIENT: Table = { alias: 'c', columns: CLIENT_COLUMNS };
/** The client calling a token endpoint, read with the token it presents. */
export const CALLER: Table = { alias: 'q', columns: CLIENT_COLUMNS };
/** A token's client, of which its checks need only the status. */
export const CLIENT_STATUS: Table = { alias: 'c', columns: ['status'] };
/** The client of a joined read's row under `table` (CLIENT or CALLER), or undefined when the row has none. */
export const clientIn = (read: JoinedRead, row: readonly unknown[], table: Table) => {
  const client = read.take<ClientRow>(row, table);
  return client && toClient(client);
};

/** Clients in the store (Store.clients). */
export interface ClientStore {
  insert(client: NewClientRecord, announce?: WebhookEvent[]): Promise<void>;
  find(id: string): Promise<ClientRecord | undefined>;
  /**
   * Clients oldest first: every one, or an account's (`accountId`), or one page of either (with a
   * `limit`, after the `after` of the page before).
   */
  list(query?: ListQuery): Promise<ClientRecord[]>;
  /** The resources (RFC 8707) that active resource-server clients serve, in no order. */
  listResources(): Promise<string[]>;
  /** The resources and scopes of the active resource-server clients that registered scopes, in no order. */
  listResourceScopes(): Promise<Array<{ resources: string[]; scopes: ResourceScope[] }>>;
  /** The names of the action types active clients registered, in no order, repeated where two clients share one. */
  listActionTypeNames(): Promise<string[]>;
  /**
   * Changes the client with the events announcing it, in one unit, adding one to its version;
   * false when there is no such client or (with `version`) it no longer has that version.
   */
  update(id: string, patch: ClientPatch, announce?: WebhookEvent[], version?: number): Promise<boolean>;
  /**
   * Stores the client of a Client ID Metadata Document: inserted the first time, its name,
   * redirect URIs, authentication method and keys brought up to date afterwards, its status (an
   * operator may disable it) kept.
   * Returns the row as it now is.
   */
  saveMetadataDocument(client: ClientRecord): Promise<ClientRecord>;
  /**
   * Deletes a client, revoking its grants in the same unit (RFC 7592 §2.3) as GrantStore.revokeAll
   * does, with its counts; null if there was none or (with `version`) it no longer has that version.
   */
  delete(
    id: string,
    now: number,
    description: string,
    announce?: WebhookEvent[],
    version?: number,
  ): Promise<RevokedGrants | null>;
}

/**
 * The clients of the database behind `driver`.
 *
 * @example
 * const clients = clientStore(driver);
 * const client = await clients.find(clientId);
 */
export function clientStore(driver: Driver): ClientStore {
  const clients: ClientStore = {
    async insert(client, announce) {
      await driver.write([insert('clients', clientColumns(client)), ...announceSteps(announce)]);
    },

    async find(id) {
      const row = await driver.one<ClientRow>('SELECT * FROM clients WHERE id = ?', [id]);
      return row && toClient(row);
    },

    async list(query) {
      if (query?.limit !== undefined) return (await pageRows<ClientRow>(driver, 'clients', query)).map(toClient);
      const rows =
        query?.accountId === undefined
          ? await driver.all<ClientRow>('SELECT * FROM clients ORDER BY created_at, id')
          : await driver.all<ClientRow>('SELECT * FROM clients WHERE account_id = ? ORDER BY created_at, id', [
              query.accountId,
            ]);
      return rows.map(toClient);
    },

    async listResources() {
      const rows = await driver.all<{ resources: string }>(
        "SELECT resources FROM clients WHERE status = 'active' AND resources <> '[]'",
      );
      return rows.flatMap((row) => JSON.parse(row.resources) as string[]);
    },

    async listResourceScopes() {
      const rows = await driver.all<{ resources: string; scopes: string }>(
        "SELECT resources, scopes FROM clients WHERE status = 'active' AND scopes <> '[]'",
      );
      return rows.map((row) => ({
        resources: JSON.parse(row.resources) as string[],
        scopes: JSON.parse(row.scopes) as ResourceScope[],
      }));
    },

    async listActionTypeNames() {
      const rows = await driver.all<{ action_types: string }>(
        "SELECT action_types FROM clients WHERE status = 'active' AND action_types IS NOT NULL",
      );
      return rows.flatMap((row) => (JSON.parse(row.action_types) as ActionType[]).map((type) => type.type));
    },

    update(id, patch, announce, version) {
      return won(driver, update('clients', 'id', id, clientColumns(patch), version), ...announceSteps(announce));
    },

    async saveMetadataDocument(client) {
      const row = insert('clients', clientColumns(client));
      // Only a metadata document's own row is brought up to date; a registered client whose id
      // happened to be the same URL would keep its record.
      await driver.write([
        {
          sql: `${row.sql} ON CONFLICT (id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris, token_endpoint_auth_method = excluded.token_endpoint_auth_method, jwks = excluded.jwks, jwks_uri = excluded.jwks_uri, last_used_at = excluded.last_used_at WHERE clients.source = 'metadata_document'`,
          params: row.params,
        },
      ]);
      return (await clients.find(client.id))!;
    },

    delete(id, now, description, announce, version) {
      return deleteWithGrants(driver, 'clients', id, now, description, announce, version);
    },
  };
  return clients;
}
