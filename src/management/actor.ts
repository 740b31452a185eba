/**
 * Who acts on the management operations (docs/design.md §17): the signed-in account in the
 * console, the account behind an API key, or the operator at the CLI on the database. Every
 * operation takes one, checks what it may reach and do by it, records the act in its name and
 * names it as the webhook events' actor. The doors only build it.
 */
import type { WarningLog } from '../domain/approvals.ts';
import type { Actor as WebhookActor } from '../domain/webhooks/actor.ts';
import { AccessDenied, InsufficientScope } from '../errors.ts';
import type { ApiKeyRecord } from '../store/api-keys.ts';
import type { AccountRecord } from '../store/accounts.ts';

/** Where an act came in: the web console, the management API, the `agentauth` command. */
export type Door = 'console' | 'api' | 'cli';

export interface Actor {
  door: Door;
  /** The account acting; null for the operator at the CLI, who acts with the database's authority. */
  account: AccountRecord | null;
  /** Reaches every account's records: an admin in the console, an admin's `all` key, the operator. */
  admin: boolean;
  /** The API key of a call through the API (what it may do is read from it). */
  key: Pick<ApiKeyRecord, 'id' | 'access' | 'reach'> | null;
  /** The address the act came from; null at the CLI. */
  ip: string | null;
  /**
   * When the person acting last proved who they are (the console session's sign-in or its
   * latest confirmation, docs/design.md §11); null when no person proved anything: an API key.
   * Making a credential needs it recent (credentials.ts).
   */
  authenticatedAt: number | null;
  /** Where a failure nobody waits for (a mail) is reported: the request's log, the CLI's stderr. */
  log?: WarningLog;
  /**
   * The operator's admin for what belongs to an admin (webhooks): the email named
   * (`--admin-email`), else the first active admin.
   */
  adminEmail?: string;
}

/**
 * The signed-in account of a console request, with when its session last proved who is at the
 * keyboard (`session.authenticated_at`; null: never, as in a test's setup).
 *
 * @example
 * const actor = consoleActor(signedIn.account, request.ip, { authenticatedAt: signedIn.session.authenticated_at, log: request.log });
 */
export function consoleActor(
  account: AccountRecord,
  ip: string | null,
  proof: { authenticatedAt: number | null; log?: WarningLog } = { authenticatedAt: null },
): Actor {
  return { door: 'console', account, admin: account.role === 'admin', key: null, ip, ...proof };
}

/**
 * The account behind an API key: an admin only when the account is one and the key reaches all
 * accounts, so an admin's `own` key reaches exactly what a member's would.
 *
 * @example
 * const actor = apiActor(key, account, request.ip);
 */
export function apiActor(key: ApiKeyRecord, account: AccountRecord, ip: string | null): Actor {
  return {
    door: 'api',
    account,
    admin: account.role === 'admin' && key.reach === 'all',
    key,
    ip,
    authenticatedAt: null,
  };
}

/**
 * The operator at the CLI on the database: every record, no account of their own.
 *
 * @example
 * await listAgents(ctx, operator());
 */
export const operator = (adminEmail?: string, log?: WarningLog): Actor => ({
  door: 'cli',
  account: null,
  admin: true,
  key: null,
  ip: null,
  authenticatedAt: null,
  adminEmail,
  log,
});

/**
 * The account as the rules that take one (webhooks, API keys) should see it: with the role it
 * acts with. The operator acts as an admin with no account.
 */
export function actingAccount(actor: Actor): AccountRecord {
  const role = actor.admin ? 'admin' : 'member';
  return actor.account ? { ...actor.account, role } : ({ id: '', role } as AccountRecord);
}

/** InsufficientScope (403) unless the actor may change records: an API key with read access may not. */
export function requireWrite(actor: Actor): void {
  if (actor.key && actor.key.access !== 'write') throw new InsufficientScope('This API key may only read.', 'write');
}

/**
 * What only an admin may do (accounts, the activity, webhooks): for a key, one that reaches all
 * accounts and is an admin's.
 */
export function requireAdmin(actor: Actor): void {
  if (actor.key && actor.key.reach !== 'all')
    throw new InsufficientScope('This needs an API key that reaches all accounts.', 'all');
  if (actor.admin) return;
  throw new AccessDenied(actor.key ? 'This needs an administrator’s API key.' : 'This page is for administrators.');
}

/**
 * The actor as webhook events name it (docs/reference/webhooks.md).
 *
 * @example
 * webhookActorOf(consoleActor(account, ip)); // { type: 'account', id: 'acc_…', email: 'ada@example.com' }
 */
export function webhookActorOf(actor: Actor): WebhookActor {
  if (actor.door === 'api' && actor.key && actor.account)
    return { type: 'api_key', key_id: actor.key.id, account_id: actor.account.id, email: actor.account.email };
  if (actor.account) return { type: 'account', id: actor.account.id, email: actor.account.email };
  return { type: 'cli' };
}
