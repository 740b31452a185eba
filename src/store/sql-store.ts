/**
 * The Store in SQL, one text for SQLite and PostgreSQL: a facade of one namespace per entity
 * (agents.ts, clients.ts, assertions.ts, requests.ts, tokens.ts, accounts.ts, sessions.ts, api-keys.ts,
 * history.ts, webhooks.ts, approvals.ts, signing-keys.ts), each an object of closures over the one driver, made
 * once; a call costs one property access more than a method of the facade itself would. What
 * belongs to the database rather than to an entity stays here: migrations, the ping, closing,
 * the limiters, the status channel and the purge across entities. Each exactly-once transition
 * is a guarded UPDATE (a conditional statement whose changed-row count says who won); when a
 * transition writes more than one row, its statements form one unit that commits or rolls back
 * as a whole (driver.ts).
 */
import {
  type AccountStore,
  accountStore,
  type ChallengeStore,
  challengeStore,
  type LinkStore,
  linkStore,
  type PasskeyStore,
  passkeyStore,
} from './accounts.ts';
import { type ActionRequestStore, actionRequestStore } from './action-requests.ts';
import { type AgentStore, agentStore } from './agents.ts';
import { type ApiKeyStore, apiKeyStore, type IdempotencyStore, idempotencyStore } from './api-keys.ts';
import { type ApprovalStore, approvalStore } from './approvals.ts';
import { type AssertionStore, assertionStore } from './assertions.ts';
import { type ClientStore, clientStore } from './clients.ts';
import type { ChangeListener, Driver } from './driver.ts';
import { type ActivityStore, activityStore, type SignInStore, signInStore } from './history.ts';
import type { Limiter, LimiterOptions } from './limits.ts';
import { migrations } from './migrations.ts';
import { type RequestStore, requestStore } from './requests.ts';
import { PURGE_BATCH } from './rows.ts';
import { type FlashStore, flashStore, type SessionStore, sessionStore } from './sessions.ts';
import { type SigningKeyStore, signingKeyStore } from './signing-keys.ts';
import {
  type AccessTokenStore,
  accessTokenStore,
  type CodeStore,
  codeStore,
  type GrantStore,
  grantStore,
  type RefreshTokenStore,
  refreshTokenStore,
} from './tokens.ts';
import type { PurgeCounts, PurgeCutoffs, Store } from './types.ts';
import { type WebhookStore, webhookStore } from './webhooks.ts';

/** The Store on one database (open.ts makes it on the driver DATABASE_URL names). */
export class SqlStore implements Store {
  readonly engine: 'sqlite' | 'postgres';
  readonly agents: AgentStore;
  readonly clients: ClientStore;
  readonly assertions: AssertionStore;
  readonly requests: RequestStore;
  readonly codes: CodeStore;
  readonly grants: GrantStore;
  readonly refreshTokens: RefreshTokenStore;
  readonly accessTokens: AccessTokenStore;
  readonly signIns: SignInStore;
  readonly activity: ActivityStore;
  readonly accounts: AccountStore;
  readonly passkeys: PasskeyStore;
  readonly challenges: ChallengeStore;
  readonly links: LinkStore;
  readonly sessions: SessionStore;
  readonly flashes: FlashStore;
  readonly apiKeys: ApiKeyStore;
  readonly idempotency: IdempotencyStore;
  readonly webhooks: WebhookStore;
  readonly approvals: ApprovalStore;
  readonly actionRequests: ActionRequestStore;
  readonly signingKeys: SigningKeyStore;

  constructor(private readonly driver: Driver) {
    this.engine = driver.engine;
    this.agents = agentStore(driver);
    this.clients = clientStore(driver);
    this.assertions = assertionStore(driver);
    this.requests = requestStore(driver);
    this.codes = codeStore(driver);
    this.grants = grantStore(driver);
    this.refreshTokens = refreshTokenStore(driver);
    this.accessTokens = accessTokenStore(driver);
    this.signIns = signInStore(driver);
    this.activity = activityStore(driver);
    this.accounts = accountStore(driver);
    this.passkeys = passkeyStore(driver);
    this.challenges = challengeStore(driver);
    this.links = linkStore(driver);
    this.sessions = sessionStore(driver);
    this.flashes = flashStore(driver);
    this.apiKeys = apiKeyStore(driver);
    this.idempotency = idempotencyStore(driver);
    this.webhooks = webhookStore(driver);
    this.approvals = approvalStore(driver);
    this.actionRequests = actionRequestStore(driver);
    this.signingKeys = signingKeyStore(driver);
  }

  migrate(): Promise<void> {
    return this.driver.migrate(migrations);
  }

  async ping(): Promise<void> {
    await this.driver.one('SELECT 1 AS ok');
  }

  close(): Promise<void> {
    return this.driver.close();
  }

  createLimiter(options: LimiterOptions): Promise<Limiter> {
    return this.driver.createLimiter(options);
  }

  watchStatus(listener: ChangeListener): Promise<() => Promise<void>> {
    return this.driver.listen(listener);
  }

  async purge(
    { expiredBefore, unauthenticatedBefore, auditBefore, unusedClients }: PurgeCutoffs,
    batchSize = PURGE_BATCH,
  ): Promise<PurgeCounts> {
    const expired = [expiredBefore];
    // Requests no agent ever authenticated are most of what an unauthenticated caller can make;
    // they go sooner, so a flood of /authorize cannot fill the disk for PURGE_AFTER.
    const requests =
      (await this.deleteInBatches(
        'authorization_requests',
        'id',
        'authenticated_at IS NULL AND expires_at < ?',
        [unauthenticatedBefore],
        batchSize,
      )) + (await this.deleteInBatches('authorization_requests', 'id', 'expires_at < ?', expired, batchSize));
    const codes = await this.deleteInBatches('authorization_codes', 'digest', 'expires_at < ?', expired, batchSize);
    const accessTokens = await this.deleteInBatches('access_tokens', 'jti', 'expires_at < ?', expired, batchSize);
    const refreshTokens = await this.deleteInBatches('refresh_tokens', 'digest', 'expires_at < ?', expired, batchSize);
    // A grant goes once nothing refers to it any more: no refresh token and no access token left.
    const grants = await this.deleteInBatches(
      'grants',
      'id',
      `created_at < ?
        AND NOT EXISTS (SELECT 1 FROM refresh_tokens WHERE refresh_tokens.grant_id = grants.id)
        AND NOT EXISTS (SELECT 1 FROM access_tokens WHERE access_tokens.grant_id = grants.id)`,
      expired,
      batchSize,
    );
    const auditEvents = await this.deleteInBatches('audit_events', 'id', 'at < ?', [auditBefore], batchSize);
    // A self-registered client goes once unused for long, after the grants above: never while a
    // grant (so a token) refers to it, nor while a request or code of it can still be used. An
    // operator's disabled one stays (a metadata document's would otherwise come back enabled).
    // Requests and codes have no client index: the unexpired ones are few and found by expiry.
    const clients = unusedClients
      ? await this.deleteInBatches(
          'clients',
          'id',
          `source IN ('metadata_document', 'dynamic') AND status = 'active' AND last_used_at < ?
            AND NOT EXISTS (SELECT 1 FROM grants WHERE grants.client_id = clients.id)
            AND NOT EXISTS (SELECT 1 FROM authorization_requests r WHERE r.expires_at > ? AND r.client_id = clients.id)
            AND NOT EXISTS (SELECT 1 FROM authorization_codes c WHERE c.expires_at > ? AND c.client_id = clients.id)`,
          [unusedClients.lastUsedBefore, unusedClients.now, unusedClients.now],
          batchSize,
        )
      : 0;
    // An assertion is refused once expired, so its used id need not be kept longer.
    // Its key is two columns (signer, jti): the batch's condition is repeated outside, so a
    // jti another signer also used, still unexpired, stays.
    const assertions = await this.deleteInBatches(
      'used_assertions',
      'jti',
      'expires_at < ?',
      [unauthenticatedBefore],
      batchSize,
      'expires_at < ?',
    );
    return { requests, codes, refreshTokens, accessTokens, grants, auditEvents, clients, assertions };
  }

  /**
   * Deletes the matching rows `batchSize` at a time, each batch a transaction of its own: a
   * backlog of a million rows then never holds SQLite's event loop or PostgreSQL's row locks
   * for seconds, and requests keep being answered between batches.
   */
  private async deleteInBatches(
    table: string,
    key: string,
    condition: string,
    params: unknown[],
    batchSize: number,
    /** Repeated on the rows deleted, for a table whose key is more than `key`; it takes `params` again. */
    alsoOnRows?: string,
  ): Promise<number> {
    const batch = `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE ${condition} LIMIT ${batchSize})`;
    const sql = alsoOnRows ? `${batch} AND ${alsoOnRows}` : batch;
    const all = alsoOnRows ? [...params, ...params] : params;
    let total = 0;
    for (;;) {
      const [deleted = 0] = (await this.driver.write([{ sql, params: all }])) ?? [];
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}
