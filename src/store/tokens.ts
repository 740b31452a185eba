/**
 * Codes, grants, refresh and access tokens (docs/design.md §9): the records, their SQL (one text
 * for SQLite and PostgreSQL), and the joined reads of the token endpoint, introspection and
 * userinfo, each one statement with the client calling and the token's grant, agent and client.
 * Four namespaces of the Store: codes, grants, refreshTokens, accessTokens. A code is issued with
 * its request's completion (requests.ts); revoking an owner's grants is rows.ts's
 * revokeGrantsSteps, which deleting an agent or a client writes too.
 */
import { AGENT, AGENT_PROFILE, type AgentProfile, type AgentRecord, agentIn, agentProfileIn } from './agents.ts';
import { CALLER, CLIENT_STATUS, type ClientRecord, clientIn } from './clients.ts';
import type { Driver, Step } from './driver.ts';
import { columnsOf, JoinedRead, type Table } from './joined.ts';
import { type AuditEvent, auditStep } from './history.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import {
  type GrantOwner,
  insert,
  type PageQuery,
  pageRows,
  type RevokedGrants,
  revokeGrantsSteps,
  won,
  wonIndependent,
} from './rows.ts';

/** An authorization code: issued to the bound browser, redeemed once for a grant and its tokens. */
export interface CodeRecord {
  digest: string;
  request_id: string;
  client_id: string;
  redirect_uri: string;
  scope: string;
  code_challenge: string;
  nonce: string | null;
  resource: string | null;
  agent_id: string;
  model: string;
  auth_time: number;
  expires_at: number;
  redeemed_at: number | null;
  grant_id: string | null;
}

/** A grant: what one sign-in allowed one client for one agent; its tokens live and die with it. */
export interface GrantRecord {
  id: string;
  client_id: string;
  agent_id: string;
  scope: string;
  model: string;
  auth_time: number;
  created_at: number;
  revoked_at: number | null;
  /** The resource (RFC 8707) every access token of the grant is for (its `aud`), or null for the client itself. */
  resource: string | null;
}

/** A refresh token, stored by digest; used once, when it is rotated. */
export interface RefreshTokenRecord {
  digest: string;
  grant_id: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

/** An access token (a JWT), known by its jti so that it can be revoked and introspected. */
export interface AccessTokenRecord {
  jti: string;
  grant_id: string;
  client_id: string;
  scope: string;
  expires_at: number;
  revoked_at: number | null;
}

/** A token with everything that decides whether it may be used, read in one query. */
export interface TokenContext<T> {
  token: T;
  grant: GrantRecord;
  /** Undefined only if the agent row is gone. */
  agent: AgentProfile | undefined;
  clientActive: boolean;
}

/** The client calling a token endpoint and the token it presents, read together; either may be absent. */
export interface CallerAndToken<T> {
  client: ClientRecord | undefined;
  token: TokenContext<T> | undefined;
}

/** Tokens written together when a code is redeemed or a refresh token rotated. */
export interface IssuedTokens {
  accessToken: AccessTokenRecord;
  refreshToken: RefreshTokenRecord;
}

/** Grants to list: of an agent, of a client, live or revoked ones; of an account's agents and websites with `accountId`. */
export type GrantQuery = PageQuery & { agentId?: string; clientId?: string; live?: boolean };

/** A client holding live grants of an agent. */
export interface ConnectedSite {
  client_id: string;
  client_name: string;
  grants: number;
  first_granted_at: number;
  last_auth_at: number;
}

/** Codes in the store (Store.codes). */
export interface CodeStore {
  find(digest: string): Promise<CodeRecord | undefined>;
  /**
   * The client calling the token endpoint and the code it presents with the code's agent, in one
   * statement (either may be absent; the agent is undefined when its row is gone).
   */
  findWithCaller(
    clientId: string,
    digest: string,
  ): Promise<{
    client: ClientRecord | undefined;
    code: { code: CodeRecord; agent: AgentRecord | undefined } | undefined;
  }>;
  /** Marks the code redeemed and stores grant and tokens in one transaction; false if it was already redeemed. */
  redeem(digest: string, now: number, grant: GrantRecord, tokens: IssuedTokens): Promise<boolean>;
}

/** Grants in the store (Store.grants). */
export interface GrantStore {
  find(id: string): Promise<GrantRecord | undefined>;
  /** Grants oldest first, one page (see GrantQuery). */
  list(query: GrantQuery): Promise<GrantRecord[]>;
  /** Clients holding grants of the agent that still have a usable token. */
  connectedSites(agentId: string, now: number): Promise<ConnectedSite[]>;
  /** The websites of the agent's unrevoked grants with each scope granted there (one row per pair). */
  grantedScopes(agentId: string): Promise<Array<{ client_id: string; client_name: string | null; scope: string }>>;
  revoke(id: string, now: number): Promise<boolean>;
  /**
   * Incident response: revokes every live grant of an agent or a client, expires its unredeemed
   * codes and ends its authenticated, not yet completed requests, in one transaction.
   */
  revokeAll(owner: GrantOwner, now: number, description: string, announce?: WebhookEvent[]): Promise<RevokedGrants>;
}

/** Refresh tokens in the store (Store.refreshTokens). */
export interface RefreshTokenStore {
  find(digest: string): Promise<RefreshTokenRecord | undefined>;
  /** The refresh token with its grant, agent and client status: one read for refresh and introspection. */
  findContext(digest: string): Promise<TokenContext<RefreshTokenRecord> | undefined>;
  /** The client calling a token endpoint and the refresh token it presents, with its context, in one statement. */
  findWithCaller(clientId: string, digest: string): Promise<CallerAndToken<RefreshTokenRecord>>;
  /**
   * Marks the refresh token used and stores its successors in one transaction; false if it was
   * already used. With `successor` (a reuse window is on), the rotated row keeps the sealed pair
   * and the successor's digest, written by the same conditional UPDATE.
   */
  rotate(digest: string, now: number, tokens: IssuedTokens, successor?: SealedSuccessor): Promise<boolean>;
  /**
   * What a repeat presentation of a rotated refresh token converges on: its sealed successor
   * pair, whether that successor has been rotated since and whether the grant is revoked, in one
   * read. Undefined when the token is unknown.
   */
  findSuccessor(digest: string): Promise<SuccessorState | undefined>;
  /**
   * Revokes the grant for reuse of one of its refresh tokens, with the sign-in history's event
   * and the webhook events announcing it, in one unit; false if it was already revoked.
   */
  revokeForReuse(grantId: string, now: number, event: AuditEvent, announce: WebhookEvent[]): Promise<boolean>;
  /** Forgets the sealed successors of tokens rotated before `before` (the purge); how many. */
  forgetSuccessors(before: number): Promise<number>;
}

/** A successor pair sealed for the reuse window, and the successor refresh token's digest. */
export interface SealedSuccessor {
  sealed: string;
  digest: string;
}

/** A rotated refresh token's successor as a repeat presentation reads it (RefreshTokenStore.findSuccessor). */
export interface SuccessorState {
  used_at: number | null;
  /** The sealed pair; null when none was kept (window 0 at rotation) or the purge forgot it. */
  successor: string | null;
  /** The successor refresh token has itself been rotated (or is gone). */
  successor_rotated: boolean;
  grant_revoked: boolean;
}

/** Access tokens in the store (Store.accessTokens). */
export interface AccessTokenStore {
  find(jti: string): Promise<AccessTokenRecord | undefined>;
  /** The access token with its grant, agent and client status: one read on the hot path of introspection and userinfo. */
  findContext(jti: string): Promise<TokenContext<AccessTokenRecord> | undefined>;
  /**
   * The client calling a token endpoint and the token it presents, with the token's context, in
   * one statement: what /introspect needs before anything else (either may be absent).
   */
  findWithCaller(clientId: string, jti: string): Promise<CallerAndToken<AccessTokenRecord>>;
  revoke(jti: string, now: number): Promise<boolean>;
}

/** The access and refresh tokens a code's redemption or a rotation writes, as two INSERTs. */
function tokenSteps(tokens: IssuedTokens): Step[] {
  return [insert('access_tokens', tokens.accessToken), insert('refresh_tokens', tokens.refreshToken)];
}

/**
 * The codes of the database behind `driver`.
 *
 * @example
 * const { code } = await codeStore(driver).findWithCaller(clientId, digest);
 */
export function codeStore(driver: Driver): CodeStore {
  return {
    find(digest) {
      return driver.one<CodeRecord>('SELECT * FROM authorization_codes WHERE digest = ?', [digest]);
    },

    async findWithCaller(clientId, digest) {
      const row = (await driver.values(CLIENT_AND_CODE.sql, [clientId, digest]))!;
      const code = CLIENT_AND_CODE.take<CodeRecord>(row, CODE);
      return {
        client: clientIn(CLIENT_AND_CODE, row, CALLER),
        code: code && { code, agent: agentIn(CLIENT_AND_CODE, row) },
      };
    },

    redeem(digest, now, grant, tokens) {
      return wonIndependent(
        driver,
        {
          sql: 'UPDATE authorization_codes SET redeemed_at = ?, grant_id = ? WHERE digest = ? AND redeemed_at IS NULL',
          params: [now, grant.id, digest],
          guard: true,
        },
        insert('grants', grant),
        ...tokenSteps(tokens),
      );
    },
  };
}

/**
 * The grants of the database behind `driver`.
 *
 * @example
 * const revoked = await grantStore(driver).revokeAll({ agent_id: id }, now, 'Revoked by the owner.');
 */
export function grantStore(driver: Driver): GrantStore {
  return {
    find(id) {
      return driver.one<GrantRecord>('SELECT * FROM grants WHERE id = ?', [id]);
    },

    async list(query) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (query.agentId) where.push('g.agent_id = ?') && params.push(query.agentId);
      if (query.clientId) where.push('g.client_id = ?') && params.push(query.clientId);
      if (query.live !== undefined) where.push(query.live ? 'g.revoked_at IS NULL' : 'g.revoked_at IS NOT NULL');
      if (query.accountId) {
        // An account's grants: those of its agents and those of its websites.
        where.push(
          '(g.agent_id IN (SELECT id FROM agents WHERE account_id = ?) OR g.client_id IN (SELECT id FROM clients WHERE account_id = ?))',
        );
        params.push(query.accountId, query.accountId);
      }
      return pageRows<GrantRecord>(driver, 'grants', query, where, params, 'g');
    },

    grantedScopes(agentId) {
      return driver.all<{ client_id: string; client_name: string | null; scope: string }>(
        `SELECT DISTINCT g.client_id, c.name AS client_name, g.scope
        FROM grants g LEFT JOIN clients c ON c.id = g.client_id
        WHERE g.agent_id = ? AND g.revoked_at IS NULL`,
        [agentId],
      );
    },

    async connectedSites(agentId, now) {
      const rows = await driver.all<Record<keyof ConnectedSite, number | string>>(
        `SELECT g.client_id, c.name AS client_name, COUNT(*) AS grants, MIN(g.created_at) AS first_granted_at, MAX(g.auth_time) AS last_auth_at
        FROM grants g JOIN clients c ON c.id = g.client_id
        WHERE g.agent_id = ? AND g.revoked_at IS NULL
          AND (EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.grant_id = g.id AND r.used_at IS NULL AND r.expires_at > ?)
            OR EXISTS (SELECT 1 FROM access_tokens t WHERE t.grant_id = g.id AND t.revoked_at IS NULL AND t.expires_at > ?))
        GROUP BY g.client_id, c.name ORDER BY c.name, g.client_id`,
        [agentId, now, now],
      );
      return rows.map((row) => ({
        client_id: String(row.client_id),
        client_name: String(row.client_name),
        grants: Number(row.grants),
        first_granted_at: Number(row.first_granted_at),
        last_auth_at: Number(row.last_auth_at),
      }));
    },

    revoke(id, now) {
      return won(driver, {
        sql: 'UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
        params: [now, id],
        guard: true,
      });
    },

    async revokeAll(owner, now, description, announce) {
      const [grants = 0, codes = 0, requests = 0] =
        (await driver.write([...revokeGrantsSteps(owner, now, description), ...announceSteps(announce)])) ?? [];
      return { grants, codes, requests };
    },
  };
}

/**
 * The refresh tokens of the database behind `driver`.
 *
 * @example
 * const { client, token } = await refreshTokenStore(driver).findWithCaller(clientId, digest);
 */
export function refreshTokenStore(driver: Driver): RefreshTokenStore {
  return {
    find(digest) {
      return driver.one<RefreshTokenRecord>('SELECT * FROM refresh_tokens WHERE digest = ?', [digest]);
    },

    findContext(digest) {
      return REFRESH_TOKEN_CONTEXT.find(driver, digest);
    },

    findWithCaller(clientId, digest) {
      return REFRESH_TOKEN_CONTEXT.findWithCaller(driver, clientId, digest);
    },

    rotate(digest, now, tokens, successor) {
      // Without a window the statement is today's: nothing more is written on the hot path.
      const mark = successor
        ? {
            sql: 'UPDATE refresh_tokens SET used_at = ?, successor = ?, successor_digest = ? WHERE digest = ? AND used_at IS NULL',
            params: [now, successor.sealed, successor.digest, digest],
          }
        : { sql: 'UPDATE refresh_tokens SET used_at = ? WHERE digest = ? AND used_at IS NULL', params: [now, digest] };
      return wonIndependent(driver, { ...mark, guard: true }, ...tokenSteps(tokens));
    },

    async findSuccessor(digest) {
      // A fresh statement: on PostgreSQL (READ COMMITTED) it sees the winner's committed rotation.
      const row = await driver.one<{
        used_at: number | null;
        successor: string | null;
        successor_used_at: number | null;
        successor_found: number | null;
        grant_revoked_at: number | null;
      }>(
        `SELECT t.used_at, t.successor, s.used_at AS successor_used_at, CASE WHEN s.digest IS NULL THEN 0 ELSE 1 END AS successor_found,
          g.revoked_at AS grant_revoked_at
        FROM refresh_tokens t JOIN grants g ON g.id = t.grant_id LEFT JOIN refresh_tokens s ON s.digest = t.successor_digest
        WHERE t.digest = ?`,
        [digest],
      );
      return (
        row && {
          used_at: row.used_at === null ? null : Number(row.used_at),
          successor: row.successor,
          successor_rotated: row.successor_used_at !== null || Number(row.successor_found) === 0,
          grant_revoked: row.grant_revoked_at !== null,
        }
      );
    },

    revokeForReuse(grantId, now, event, announce) {
      return won(
        driver,
        {
          sql: 'UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
          params: [now, grantId],
          guard: true,
        },
        auditStep(event),
        ...announceSteps(announce),
      );
    },

    async forgetSuccessors(before) {
      const [forgotten = 0] =
        (await driver.write([
          {
            sql: 'UPDATE refresh_tokens SET successor = NULL, successor_digest = NULL WHERE successor IS NOT NULL AND used_at < ?',
            params: [before],
          },
        ])) ?? [];
      return forgotten;
    },
  };
}

/**
 * The access tokens of the database behind `driver`.
 *
 * @example
 * const context = await accessTokenStore(driver).findContext(jti);
 */
export function accessTokenStore(driver: Driver): AccessTokenStore {
  return {
    find(jti) {
      return driver.one<AccessTokenRecord>('SELECT * FROM access_tokens WHERE jti = ?', [jti]);
    },

    findContext(jti) {
      return ACCESS_TOKEN_CONTEXT.find(driver, jti);
    },

    findWithCaller(clientId, jti) {
      return ACCESS_TOKEN_CONTEXT.findWithCaller(driver, clientId, jti);
    },

    revoke(jti, now) {
      return won(driver, {
        sql: 'UPDATE access_tokens SET revoked_at = ? WHERE jti = ? AND revoked_at IS NULL',
        params: [now, jti],
        guard: true,
      });
    },
  };
}

/** A code's every column in a joined read. */
const CODE: Table = {
  alias: 'k',
  columns: columnsOf<CodeRecord>()([
    'digest',
    'request_id',
    'client_id',
    'redirect_uri',
    'scope',
    'code_challenge',
    'nonce',
    'resource',
    'agent_id',
    'model',
    'auth_time',
    'expires_at',
    'redeemed_at',
    'grant_id',
  ]),
};
/** A grant's every column in a joined read. */
const GRANT: Table = {
  alias: 'g',
  columns: columnsOf<GrantRecord>()([
    'id',
    'client_id',
    'agent_id',
    'scope',
    'model',
    'auth_time',
    'created_at',
    'revoked_at',
    'resource',
  ]),
};
/** The calling client, the code and the code's agent: what a code exchange needs, one row whatever exists. */
const CLIENT_AND_CODE = new JoinedRead(
  [CALLER, CODE, AGENT],
  'FROM (SELECT 1 AS one) x LEFT JOIN clients q ON q.id = ? LEFT JOIN authorization_codes k ON k.digest = ? LEFT JOIN agents a ON a.id = k.agent_id',
);

/** A token read with its grant, its agent and its client's status, in one statement. */
class TokenContextRead<T> {
  private readonly alone: JoinedRead;
  /**
   * The same, with the client calling the endpoint: one row whatever exists (the caller and the
   * token are each left-joined to a one-row table), so client authentication and the token's
   * lookup cost one round trip together.
   */
  private readonly withCaller: JoinedRead;
  private readonly token: Table;

  /** `columns`: the token table's, its key first. */
  constructor(table: string, columns: string[]) {
    const key = columns[0]!;
    this.token = { alias: 't', columns };
    const tables = [this.token, GRANT, AGENT_PROFILE, CLIENT_STATUS];
    const context = 'LEFT JOIN agents a ON a.id = g.agent_id LEFT JOIN clients c ON c.id = g.client_id';
    this.alone = new JoinedRead(
      tables,
      `FROM ${table} t JOIN grants g ON g.id = t.grant_id ${context} WHERE t.${key} = ?`,
    );
    this.withCaller = new JoinedRead(
      [CALLER, ...tables],
      `FROM (SELECT 1 AS one) x LEFT JOIN clients q ON q.id = ? LEFT JOIN ${table} t ON t.${key} = ? LEFT JOIN grants g ON g.id = t.grant_id ${context}`,
    );
  }

  async find(driver: Driver, key: string): Promise<TokenContext<T> | undefined> {
    const row = await driver.values(this.alone.sql, [key]);
    return row && this.parse(this.alone, row);
  }

  async findWithCaller(driver: Driver, clientId: string, key: string): Promise<CallerAndToken<T>> {
    const row = (await driver.values(this.withCaller.sql, [clientId, key]))!;
    return { client: clientIn(this.withCaller, row, CALLER), token: this.parse(this.withCaller, row) };
  }

  /** A token whose grant is gone counts as absent, as in the inner join of the read without caller. */
  private parse(read: JoinedRead, row: readonly unknown[]): TokenContext<T> | undefined {
    const token = read.take<T>(row, this.token);
    const grant = read.take<GrantRecord>(row, GRANT);
    if (!token || !grant) return undefined;
    return {
      token,
      grant,
      agent: agentProfileIn(read, row),
      clientActive: read.take<{ status: string }>(row, CLIENT_STATUS)?.status === 'active',
    };
  }
}

const ACCESS_TOKEN_CONTEXT = new TokenContextRead<AccessTokenRecord>(
  'access_tokens',
  columnsOf<AccessTokenRecord>()(['jti', 'grant_id', 'client_id', 'scope', 'expires_at', 'revoked_at']),
);
const REFRESH_TOKEN_CONTEXT = new TokenContextRead<RefreshTokenRecord>(
  'refresh_tokens',
  columnsOf<RefreshTokenRecord>()(['digest', 'grant_id', 'created_at', 'expires_at', 'used_at']),
);
