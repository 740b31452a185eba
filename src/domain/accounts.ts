/**
 * Accounts of people in the console (docs/design.md §11): creation by the CLI, by invitation or
 * by open sign-up, one-time links, passwords, names, roles and email verification.
 */
import { digest, PREFIX, randomId } from '../crypto.ts';
import type { Context } from '../context.ts';
import { agentauthCommand } from '../paths.ts';
import { EMAIL } from './rules/agent.ts';
import type { AccountLinkRecord, AccountPatch, AccountRecord, AccountRole, LinkPurpose } from '../store/accounts.ts';
import type { WebhookEvent } from '../store/outbox.ts';
import { AccessDenied, InvalidField, NotFound, PreconditionFailed } from '../errors.ts';
import { currentActor } from './webhooks/actor.ts';
import { accountEvent } from './webhooks/events.ts';
import { creatorActive, endLinksOf, LINK_REVOKED } from './account-links.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'config'>;

/** NIST SP 800-63B-4: at least 15 characters for a password that is the only factor; no composition rules. */
export const MIN_PASSWORD_LENGTH = 15;
/** Long enough for any passphrase; bounded so a request cannot make hashing slow. */
export const MAX_PASSWORD_LENGTH = 256;
export const MAX_NAME_LENGTH = 200;
/** Email verification links stay usable for a day. */
const VERIFY_LINK_TTL = 86400;

/**
 * An email as typed (trimmed) and the key that makes it unique (lower-cased).
 *
 * @example
 * emailOf(' Ada@Example.com ') // { email: 'Ada@Example.com', key: 'ada@example.com' }
 */
export function emailOf(raw: string): { email: string; key: string } {
  const email = raw.trim();
  if (email.length > 320 || !EMAIL.test(email))
    throw new InvalidField('email', 'Enter an email address, such as ada@example.com.');
  return { email, key: email.toLowerCase() };
}

/** A display name: trimmed, at most 200 characters; empty means none. */
export function nameOf(raw: string | undefined): string | null {
  const name = (raw ?? '').trim();
  if (name.length > MAX_NAME_LENGTH)
    throw new InvalidField('name', `A name can be at most ${MAX_NAME_LENGTH} characters long.`);
  return name || null;
}

/** Refuses a password that is too short, too long, or the account's email. */
export function checkPassword(password: string, email: string): void {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH)
    throw new InvalidField(
      'password',
      `Use at least ${MIN_PASSWORD_LENGTH} characters; a few unrelated words make a good password.`,
    );
  if (length > MAX_PASSWORD_LENGTH)
    throw new InvalidField('password', `Use at most ${MAX_PASSWORD_LENGTH} characters.`);
  if (password.trim().toLowerCase() === email.toLowerCase())
    throw new InvalidField('password', 'Your password must not be your email address.');
}

/**
 * The argon2 library, loaded on first use: its native module and thread pool cost about 14 MB,
 * which a node that never checks a password (most of them: agents and websites never do) need
 * not pay.
 */
let argon2: Promise<typeof import('@node-rs/argon2')> | undefined;
const loadArgon2 = () => (argon2 ??= import('@node-rs/argon2'));

/** argon2id with the library's defaults (19 MiB, 2 passes, 1 lane: OWASP's minimum). */
export async function hashPassword(password: string): Promise<string> {
  return (await loadArgon2()).hash(password);
}

let decoyHash: Promise<string> | undefined;

/**
 * What makes the first administrator on a server without any account: run where the server runs,
 * with its environment; it prints a one-time setup link.
 */
export const firstAdminCommand = (): string => `${agentauthCommand()} account create --email you@example.com --admin`;

/** Longer passwords are refused without hashing them. */
const CHECKED_PASSWORD_LENGTH = 1024;

/**
 * Whether the password matches the hash. Without a hash (no such account, or one without a
 * password) a decoy hash is checked instead, so the answer takes as long either way.
 */
export async function passwordMatches(passwordHash: string | null, password: string): Promise<boolean> {
  // Nothing longer was ever set (MAX_PASSWORD_LENGTH), and argon2 should not hash megabytes.
  if (password.length === 0 || password.length > CHECKED_PASSWORD_LENGTH) return false;
  const { verify } = await loadArgon2();
  if (passwordHash === null) {
    decoyHash ??= hashPassword('agentauth: no such account');
    await verify(await decoyHash, password);
    return false;
  }
  return verify(passwordHash, password);
}

export interface NewAccount {
  email: string;
  name?: string;
  role: AccountRole;
  emailVerified?: boolean;
  password?: string;
}

function accountRecord(deps: Deps, input: NewAccount, passwordHash: string | null): AccountRecord {
  const { email, key } = emailOf(input.email);
  return {
    id: randomId(PREFIX.account, 16),
    email,
    email_key: key,
    name: nameOf(input.name),
    role: input.role,
    status: 'active',
    email_verified: input.emailVerified ?? false,
    password_hash: passwordHash,
    created_at: deps.clock(),
    last_sign_in_at: null,
    version: 1,
  };
}

const EMAIL_TAKEN = 'An account with this email already exists.';

/**
 * Creates an account without a link (the CLI's first admin, an admin). Throws InvalidField when
 * the email is taken.
 *
 * @example
 * const account = await createAccount(ctx, { email: 'ada@example.com', role: 'admin' });
 */
export async function createAccount(deps: Deps, input: NewAccount): Promise<AccountRecord> {
  const account = accountRecord(deps, input, null);
  if (input.password !== undefined) {
    checkPassword(input.password, account.email);
    account.password_hash = await hashPassword(input.password);
  }
  if (!(await deps.store.accounts.insert(account, [accountEvent('account.created', account)])))
    throw new InvalidField('email', EMAIL_TAKEN);
  return account;
}

/** A link's path on this server: what a link is without the server's public URL. */
export function linkPath(purpose: LinkPurpose, token: string): string {
  return `/console/${{ setup: 'setup', invite: 'invitation', verify: 'verify-email' }[purpose]}/${token}`;
}

/** A link's address on this server. */
export function linkUrl(deps: Pick<Context, 'config'>, purpose: LinkPurpose, token: string): string {
  return `${deps.config.baseUrl}${linkPath(purpose, token)}`;
}

/**
 * A one-time link: only its digest is stored, the token is in the URL and the path returned
 * (shown once; the path alone where the server's public URL is not known, as in the CLI).
 *
 * @example
 * const { url } = await issueLink(ctx, 'invite', { role: 'member', createdBy: admin.id });
 */
export async function issueLink(
  deps: Deps,
  purpose: LinkPurpose,
  input: { accountId?: string; email?: string; role?: AccountRole; createdBy?: string; ttl?: number },
): Promise<{ url: string; path: string; expiresAt: number }> {
  const token = randomId(PREFIX.consoleLink, 32);
  const now = deps.clock();
  const link: AccountLinkRecord = {
    digest: digest(token),
    purpose,
    account_id: input.accountId ?? null,
    email: input.email ?? null,
    role: input.role ?? null,
    created_by: input.createdBy ?? null,
    created_at: now,
    expires_at: now + (input.ttl ?? (purpose === 'verify' ? VERIFY_LINK_TTL : deps.config.consoleLinkTtl)),
    used_at: null,
    revoked_at: null,
  };
  await deps.store.links.insert(link);
  return { url: linkUrl(deps, purpose, token), path: linkPath(purpose, token), expiresAt: link.expires_at };
}

/** The usable link of this purpose behind the token, or NotFound saying why not. */
export async function usableLink(deps: Deps, token: string, purpose: LinkPurpose): Promise<AccountLinkRecord> {
  const link = await deps.store.links.find(digest(token));
  if (!link || link.purpose !== purpose)
    throw new NotFound('This link is not valid. Check that you copied all of it, or ask for a new one.');
  if (link.used_at !== null)
    throw new NotFound('This link has already been used. Each link works once; ask for a new one if you need it.');
  // Revoked, or made by an account disabled since (even where its links were not ended).
  if (link.revoked_at !== null || !(await creatorActive(deps, link))) throw new NotFound(LINK_REVOKED);
  if (link.expires_at <= deps.clock()) throw new NotFound('This link has expired. Ask for a new one.');
  return link;
}

/**
 * Uses a setup link: the account it was made for, now signed in by it once. The person then adds
 * a passkey or a password.
 */
export async function useSetupLink(deps: Deps, token: string): Promise<AccountRecord> {
  const link = await usableLink(deps, token, 'setup');
  const account = link.account_id === null ? undefined : await deps.store.accounts.find(link.account_id);
  if (!account) throw new NotFound('The account of this link no longer exists.');
  if (account.status !== 'active')
    throw new AccessDenied('This account is disabled. Ask an administrator to enable it.');
  if (!(await deps.store.links.use(digest(token), 'setup', deps.clock())))
    throw new NotFound('This link has already been used.');
  return account;
}

/**
 * Creates an account from an invitation (the link is used in the same transaction) or, with
 * CONSOLE_SIGNUP=open, without one. The password is optional: without it the person adds a
 * passkey next.
 */
export async function signUp(
  deps: Deps,
  token: string | null,
  input: { email: string; name?: string; password?: string },
): Promise<AccountRecord> {
  const link = token === null ? null : await usableLink(deps, token, 'invite');
  if (link === null && deps.config.consoleSignup !== 'open')
    throw new AccessDenied('Sign-up needs an invitation on this server.');
  const account = accountRecord(deps, { email: input.email, name: input.name, role: link?.role ?? 'member' }, null);
  if (input.password) {
    checkPassword(input.password, account.email);
    account.password_hash = await hashPassword(input.password);
  }
  const created = [accountEvent('account.created', account, { invited: link !== null })];
  if (link === null) {
    if (!(await deps.store.accounts.insert(account, created))) throw new InvalidField('email', EMAIL_TAKEN);
    return account;
  }
  const outcome = await deps.store.accounts.insertWithLink(account, link.digest, deps.clock(), created);
  if (outcome === 'email_taken') throw new InvalidField('email', EMAIL_TAKEN);
  if (outcome === null) throw new NotFound('This invitation has already been used or revoked, or has expired.');
  return account;
}

export async function setPassword(deps: Deps, account: AccountRecord, password: string): Promise<void> {
  checkPassword(password, account.email);
  await deps.store.accounts.update(account.id, { password_hash: await hashPassword(password) }, [
    accountEvent('account.sign_in_method_changed', account, {
      change: account.password_hash === null ? 'password_set' : 'password_changed',
    }),
  ]);
}

/** Removes the password of an account that has a passkey to sign in with. */
export async function removePassword(deps: Deps, account: AccountRecord): Promise<void> {
  if ((await deps.store.passkeys.list(account.id)).length === 0) {
    throw new InvalidField(
      'password',
      'Add a passkey before you remove your password, or you could not sign in again.',
    );
  }
  await deps.store.accounts.update(account.id, { password_hash: null }, [
    accountEvent('account.sign_in_method_changed', account, { change: 'password_removed' }),
  ]);
}

/** Renames the account; with `version`, only while the account still has it (If-Match), as the admin's changes below. */
export async function rename(deps: Deps, account: AccountRecord, name: string, version?: number): Promise<void> {
  const patch = { name: nameOf(name) };
  const announce = [accountEvent('account.updated', { ...account, ...patch }, { changes: ['name'] })];
  await changeAccount(deps, account.id, patch, announce, version);
}

/** An account's change; with `version` PreconditionFailed when the account no longer has it. */
async function changeAccount(
  deps: Deps,
  id: string,
  patch: AccountPatch,
  announce: WebhookEvent[],
  version: number | undefined,
): Promise<void> {
  if (!(await deps.store.accounts.update(id, patch, announce, version)) && version !== undefined)
    throw new PreconditionFailed();
}

/** The account, or NotFound: what admin actions on another account start with. */
export async function accountById(deps: Deps, id: string): Promise<AccountRecord> {
  const account = await deps.store.accounts.find(id);
  if (!account) throw new NotFound('No such account.');
  return account;
}

/**
 * The account with this email (any case), or an error naming the email as it was given.
 *
 * @example
 * const account = await accountByEmail(ctx, 'Ada@Example.com');
 */
export async function accountByEmail(deps: Pick<Context, 'store'>, raw: string): Promise<AccountRecord> {
  let key: string;
  try {
    key = emailOf(raw).key;
  } catch {
    throw new InvalidField('email', `${raw} is not an email address`);
  }
  const account = await deps.store.accounts.findByEmail(key);
  if (!account) throw new NotFound(`no account with the email ${raw}`);
  return account;
}

/**
 * Disables or enables an account; disabling ends its sessions, its API keys, the links it made
 * and the setup links made for it (enabling it again brings none of them back). An admin cannot disable
 * themselves, so that the console always keeps one admin who can undo it. The actor is null
 * for the CLI. The account's agents and websites keep working: an admin disables those apart.
 */
export async function setAccountStatus(
  deps: Deps,
  actor: AccountRecord | null,
  target: AccountRecord,
  status: 'active' | 'disabled',
  version?: number,
): Promise<void> {
  if (actor?.id === target.id && status === 'disabled') throw new AccessDenied('You cannot disable your own account.');
  const announce =
    target.status === status
      ? []
      : [
          accountEvent(
            status === 'active' ? 'account.enabled' : 'account.disabled',
            { ...target, status },
            {
              actor: actorData(actor),
            },
          ),
        ];
  await changeAccount(deps, target.id, { status }, announce, version);
  if (status === 'disabled') {
    await deps.store.sessions.deleteAll(target.id);
    await deps.store.apiKeys.revokeAll(target.id, deps.clock());
    await endLinksOf(deps, target.id);
  }
}

/**
 * Gives an account the role; taking the admin role also revokes its API keys that reach every
 * account, made for an admin's reach (given the role again, they must not come back with it).
 * No one takes the admin role from themselves.
 *
 * @example
 * await setAccountRole(ctx, admin, member, 'admin');
 */
export async function setAccountRole(
  deps: Deps,
  actor: AccountRecord | null,
  target: AccountRecord,
  role: AccountRole,
  version?: number,
): Promise<void> {
  if (actor?.id === target.id && role !== 'admin')
    throw new AccessDenied('You cannot take the admin role from yourself.');
  const announce =
    target.role === role
      ? []
      : [accountEvent('account.updated', { ...target, role }, { changes: ['role'], actor: actorData(actor) })];
  await changeAccount(deps, target.id, { role }, announce, version);
  if (target.role === 'admin' && role !== 'admin') await deps.store.apiKeys.revokeAll(target.id, deps.clock(), 'all');
}

/** Who did it, as events say: the entry point's actor (an API key names its account), else the account, or the CLI (null). */
const actorData = (actor: AccountRecord | null) =>
  currentActor() ?? (actor === null ? { type: 'cli' } : { type: 'account', id: actor.id, email: actor.email });

/** Uses an email verification link: the account, now with its email verified. */
export async function verifyEmailWithLink(deps: Deps, token: string): Promise<AccountRecord> {
  await usableLink(deps, token, 'verify');
  const account = await deps.store.links.useVerification(digest(token), deps.clock());
  if (!account) throw new NotFound('This link was sent to an address the account no longer has.');
  return account;
}

/**
 * Mails a verification link to the account's email; false when no SMTP_URL is set (an admin
 * then verifies the email).
 *
 * @example
 * if (!(await sendVerificationEmail(ctx, account))) notice('Ask an administrator to verify your email.');
 */
export async function sendVerificationEmail(
  deps: Deps & Pick<Context, 'mailer'>,
  account: AccountRecord,
): Promise<boolean> {
  const mailer = deps.mailer;
  if (mailer === null) return false;
  const { url } = await issueLink(deps, 'verify', { accountId: account.id, email: account.email });
  await mailer.send({
    to: account.email,
    subject: 'Verify your email for agentauth',
    text: `Hello${account.name ? ` ${account.name}` : ''},\n\nopen this link to confirm that ${account.email} is your address:\n\n${url}\n\nIt works once, within a day. If you did not ask for it, ignore this mail.\n`,
  });
  return true;
}

/** An admin vouches for the account's email. */
export async function verifyEmailByAdmin(deps: Deps, target: AccountRecord): Promise<void> {
  await deps.store.accounts.update(target.id, { email_verified: true }, [
    accountEvent('account.updated', { ...target, email_verified: true }, { changes: ['email_verified'] }),
  ]);
}

/**
 * Whether the server has no account yet: the sign-in page then says how to make the first admin.
 *
 * @example
 * if (await noAccountYet(ctx)) showFirstAdminCommand();
 */
export async function noAccountYet(deps: Pick<Context, 'store'>): Promise<boolean> {
  return (await deps.store.accounts.count()) === 0;
}

/**
 * The account behind an id, or undefined (a link's maker, an approval's decider, who may be gone).
 *
 * @example
 * const inviter = await findAccount(ctx, link.created_by);
 */
export function findAccount(deps: Pick<Context, 'store'>, id: string): Promise<AccountRecord | undefined> {
  return deps.store.accounts.find(id);
}
