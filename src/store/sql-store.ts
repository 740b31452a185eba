/**
 * The Store over Kysely. The same statements serve SQLite and PostgreSQL; each exactly-once
 * transition is a conditional UPDATE whose affected-row count says who won, inside a
 * transaction when it writes more than one row.
 */
import { randomBytes } from 'node:crypto';
import { type Kysely, Migrator, type Transaction, sql } from 'kysely';
import { migrationProvider } from './migrations.ts';
import type {
  AccessTokenRecord,
  AgentRecord,
  AuditEvent,
  AuthorizationRequestRecord,
  ClientRecord,
  CodeRecord,
  GrantRecord,
  IssuedTokens,
  Limiter,
  LimiterOptions,
  PurgeCounts,
  RefreshTokenRecord,
  Store,
} from './types.ts';

type ClientRow = Omit<ClientRecord, 'redirect_uris'> & { redirect_uris: string };
type AgentRow = Omit<AgentRecord, 'owner_email_verified'> & { owner_email_verified: number };

export interface Database {
  clients: ClientRow;
  agents: AgentRow;
  authorization_requests: AuthorizationRequestRecord;
  authorization_codes: CodeRecord;
  grants: GrantRecord;
  refresh_tokens: RefreshTokenRecord;
  access_tokens: AccessTokenRecord;
  audit_events: AuditEvent & { id: string };
}

const toClient = (row: ClientRow): ClientRecord => ({ ...row, redirect_uris: JSON.parse(row.redirect_uris) as string[] });
const toAgent = (row: AgentRow): AgentRecord => ({ ...row, owner_email_verified: row.owner_email_verified === 1 });
const changed = (result: { numUpdatedRows: bigint } | { numDeletedRows: bigint }) =>
  Number('numUpdatedRows' in result ? result.numUpdatedRows : result.numDeletedRows);

export interface EngineHooks {
  createLimiter(options: LimiterOptions): Promise<Limiter>;
  /** Runs after the Kysely instance is destroyed. */
  close?(): Promise<void>;
}

export class SqlStore implements Store {
  constructor(
    readonly engine: 'sqlite' | 'postgres',
    private readonly db: Kysely<Database>,
    private readonly hooks: EngineHooks,
  ) {}

  createLimiter(options: LimiterOptions): Promise<Limiter> {
    return this.hooks.createLimiter(options);
  }

  async migrate(): Promise<void> {
    const { error } = await new Migrator({ db: this.db, provider: migrationProvider }).migrateToLatest();
    if (error) throw error;
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.hooks.close?.();
  }

  // Clients

  async insertClient(client: ClientRecord): Promise<void> {
    await this.db.insertInto('clients').values({ ...client, redirect_uris: JSON.stringify(client.redirect_uris) }).execute();
  }

  async findClient(id: string): Promise<ClientRecord | undefined> {
    const row = await this.db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toClient(row);
  }

  async listClients(): Promise<ClientRecord[]> {
    return (await this.db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('id').execute()).map(toClient);
  }

  async updateClient(id: string, patch: Partial<Pick<ClientRecord, 'status' | 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>>): Promise<boolean> {
    return changed(await this.db.updateTable('clients').set(patch).where('id', '=', id).executeTakeFirst()) === 1;
  }

  // Agents

  async insertAgent(agent: AgentRecord): Promise<void> {
    await this.db.insertInto('agents').values({ ...agent, owner_email_verified: agent.owner_email_verified ? 1 : 0 }).execute();
  }

  async findAgent(id: string): Promise<AgentRecord | undefined> {
    const row = await this.db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toAgent(row);
  }

  async listAgents(): Promise<AgentRecord[]> {
    return (await this.db.selectFrom('agents').selectAll().orderBy('created_at').orderBy('id').execute()).map(toAgent);
  }

  async updateAgent(id: string, patch: Partial<Pick<AgentRecord, 'status' | 'secret_digest' | 'previous_secret_digest' | 'previous_secret_expires_at' | 'last_used_at'>>): Promise<boolean> {
    return changed(await this.db.updateTable('agents').set(patch).where('id', '=', id).executeTakeFirst()) === 1;
  }

  // Authorization requests

  async insertRequest(request: AuthorizationRequestRecord): Promise<void> {
    await this.db.insertInto('authorization_requests').values(request).execute();
  }

  async findRequest(id: string): Promise<AuthorizationRequestRecord | undefined> {
    return this.db.selectFrom('authorization_requests').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async markRequestAuthenticated(id: string, by: { agent_id: string; model: string }, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('authorization_requests')
      .set({ status: 'authenticated', agent_id: by.agent_id, model: by.model, authenticated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  async completeRequestWithCode(id: string, browserDigest: string, now: number, code: CodeRecord): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('authorization_requests')
        .set({ status: 'completed' })
        .where('id', '=', id)
        .where('status', '=', 'authenticated')
        .where('browser_digest', '=', browserDigest)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (changed(result) !== 1) return false;
      await trx.insertInto('authorization_codes').values(code).execute();
      return true;
    });
  }

  async failRequest(id: string, browserDigest: string, now: number, error: string, description: string): Promise<boolean> {
    const result = await this.db
      .updateTable('authorization_requests')
      .set({ status: 'error', error, error_description: description })
      .where('id', '=', id)
      .where('status', 'in', ['pending', 'authenticated'])
      .where('browser_digest', '=', browserDigest)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return changed(result) === 1;
  }

  // Codes, grants and tokens

  async findCode(digest: string): Promise<CodeRecord | undefined> {
    return this.db.selectFrom('authorization_codes').selectAll().where('digest', '=', digest).executeTakeFirst();
  }

  async redeemCode(digest: string, now: number, grant: GrantRecord, tokens: IssuedTokens): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('authorization_codes')
        .set({ redeemed_at: now, grant_id: grant.id })
        .where('digest', '=', digest)
        .where('redeemed_at', 'is', null)
        .executeTakeFirst();
      if (changed(result) !== 1) return false;
      await trx.insertInto('grants').values(grant).execute();
      await insertTokens(trx, tokens);
      return true;
    });
  }

  async findGrant(id: string): Promise<GrantRecord | undefined> {
    return this.db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async revokeGrant(id: string, now: number): Promise<boolean> {
    const result = await this.db.updateTable('grants').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return changed(result) === 1;
  }

  async findRefreshToken(digest: string): Promise<RefreshTokenRecord | undefined> {
    return this.db.selectFrom('refresh_tokens').selectAll().where('digest', '=', digest).executeTakeFirst();
  }

  async rotateRefreshToken(digest: string, now: number, tokens: IssuedTokens): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('refresh_tokens')
        .set({ used_at: now })
        .where('digest', '=', digest)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (changed(result) !== 1) return false;
      await insertTokens(trx, tokens);
      return true;
    });
  }

  async findAccessToken(jti: string): Promise<AccessTokenRecord | undefined> {
    return this.db.selectFrom('access_tokens').selectAll().where('jti', '=', jti).executeTakeFirst();
  }

  async revokeAccessToken(jti: string, now: number): Promise<boolean> {
    const result = await this.db.updateTable('access_tokens').set({ revoked_at: now }).where('jti', '=', jti).where('revoked_at', 'is', null).executeTakeFirst();
    return changed(result) === 1;
  }

  // Audit and housekeeping

  async recordAuditEvent(event: AuditEvent): Promise<void> {
    await this.db.insertInto('audit_events').values({ id: `evt_${randomBytes(15).toString('base64url')}`, ...event }).execute();
  }

  async listAuditEvents(filter: { agent_id?: string; limit: number }): Promise<AuditEvent[]> {
    let query = this.db.selectFrom('audit_events').select(['at', 'agent_id', 'request_id', 'client_id', 'model', 'ip', 'user_agent', 'outcome']);
    if (filter.agent_id !== undefined) query = query.where('agent_id', '=', filter.agent_id);
    return query.orderBy('at', 'desc').limit(filter.limit).execute();
  }

  async purge(expiredBefore: number, auditBefore: number): Promise<PurgeCounts> {
    const db = this.db;
    const requests = changed(await db.deleteFrom('authorization_requests').where('expires_at', '<', expiredBefore).executeTakeFirst());
    const codes = changed(await db.deleteFrom('authorization_codes').where('expires_at', '<', expiredBefore).executeTakeFirst());
    const accessTokens = changed(await db.deleteFrom('access_tokens').where('expires_at', '<', expiredBefore).executeTakeFirst());
    const refreshTokens = changed(await db.deleteFrom('refresh_tokens').where('expires_at', '<', expiredBefore).executeTakeFirst());
    // A grant goes once nothing refers to it any more: no refresh token and no access token left.
    const grants = changed(
      await db
        .deleteFrom('grants')
        .where((eb) => eb.not(eb.exists(eb.selectFrom('refresh_tokens').select('digest').whereRef('refresh_tokens.grant_id', '=', 'grants.id'))))
        .where((eb) => eb.not(eb.exists(eb.selectFrom('access_tokens').select('jti').whereRef('access_tokens.grant_id', '=', 'grants.id'))))
        .where('created_at', '<', expiredBefore)
        .executeTakeFirst(),
    );
    const auditEvents = changed(await db.deleteFrom('audit_events').where('at', '<', auditBefore).executeTakeFirst());
    return { requests, codes, refreshTokens, accessTokens, grants, auditEvents };
  }
}

async function insertTokens(trx: Transaction<Database>, tokens: IssuedTokens): Promise<void> {
  await trx.insertInto('access_tokens').values(tokens.accessToken).execute();
  await trx.insertInto('refresh_tokens').values(tokens.refreshToken).execute();
}
