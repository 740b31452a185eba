/**
 * What admins do with the console's accounts, through any door (docs/design.md §11, §17):
 * creation with a one-time setup link, names, roles, status, a vouched email, new setup links
 * and the revocation of unused links; and anyone's invitation link. Each act is recorded. A link
 * is a credential: making one needs a fresh authentication and mails the account it lets in
 * (credentials.ts), and no account makes a setup link for itself.
 */
import type { Context } from '../context.ts';
import { type OutstandingLink, outstandingLinks, revokeOutstandingLink } from '../domain/account-links.ts';
import {
  accountByEmail,
  accountById,
  createAccount as createAccountRecord,
  emailOf,
  issueLink,
  nameOf,
  rename,
  setAccountRole,
  setAccountStatus,
  verifyEmailByAdmin,
} from '../domain/accounts.ts';
import { AccessDenied, Conflict, InvalidField } from '../errors.ts';
import type { AccountLinkRecord, AccountRecord, AccountRole, AccountStatus } from '../store/accounts.ts';
import { type Actor, requireAdmin, requireWrite } from './actor.ts';
import { asActor, recordAct } from './audit.ts';
import { mailCredentialMade, requireFreshAuthentication } from './credentials.ts';
import { checkedVersion, type ListQuery, type Precondition } from './shared.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'config'>;
/** What an act that makes a link needs besides: the mailer, to tell the account. */
type MailingDeps = Deps & Pick<Context, 'mailer'>;

/** A one-time link as made: its whole URL, its path on the server's address, and its end. */
export interface IssuedLink {
  url: string;
  path: string;
  expiresAt: number;
}

/** An admin, writing: what every change of an account needs. */
function requireAdminWrite(actor: Actor): void {
  requireAdmin(actor);
  requireWrite(actor);
}

/**
 * Every account, oldest first (a page of them when `limit` is given), or the one with `email`.
 *
 * @example
 * const accounts = await listAccounts(ctx, actor, { limit: 21 });
 */
export async function listAccounts(
  deps: Deps,
  actor: Actor,
  query: Omit<ListQuery, 'accountId'> & { email?: string } = {},
): Promise<AccountRecord[]> {
  requireAdmin(actor);
  if (query.email !== undefined) {
    const found = await deps.store.accounts.findByEmail(emailOf(query.email).key);
    return found ? [found] : [];
  }
  if (query.limit !== undefined) return deps.store.accounts.list({ limit: query.limit, after: query.after });
  return deps.store.accounts.list();
}

/**
 * The account with this email (any case), or an error naming the email as it was given.
 *
 * @example
 * const account = await getAccountByEmail(ctx, actor, 'Ada@Example.com');
 */
export async function getAccountByEmail(deps: Deps, actor: Actor, email: string): Promise<AccountRecord> {
  requireAdmin(actor);
  return accountByEmail(deps, email);
}

/** The account, or NotFound. */
export async function getAccount(deps: Deps, actor: Actor, id: string): Promise<AccountRecord> {
  requireAdmin(actor);
  return accountById(deps, id);
}

/**
 * Creates an account and its first setup link (shown once), which is a credential: it needs a
 * fresh authentication (an API key is refused). A taken email is a Conflict.
 *
 * @example
 * const { account, link } = await createAccount(ctx, actor, { email: 'ada@example.com', role: 'member' });
 */
export async function createAccount(
  deps: MailingDeps,
  actor: Actor,
  input: { email: string; name?: string; role: AccountRole },
): Promise<{ account: AccountRecord; link: IssuedLink }> {
  requireAdminWrite(actor);
  requireFreshAuthentication(deps, actor, 'make an account with a setup link');
  emailOf(input.email);
  let account: AccountRecord;
  try {
    account = await asActor(actor, () => createAccountRecord(deps, input));
  } catch (error) {
    // The email was checked above, so an email refused now is one already taken.
    if (error instanceof InvalidField && error.field === 'email') throw new Conflict(error.description);
    throw error;
  }
  await recordAct(deps, actor, 'admin.create_account', account.id);
  return { account, link: await setupLink(deps, actor, account) };
}

/** What an account's change may say; each field left out stays. */
export interface AccountChanges {
  name?: string;
  role?: AccountRole;
  status?: AccountStatus;
}

/**
 * Renames an account, changes its role, disables or enables it. No one takes the admin role from
 * themselves or disables their own account, so there is always an administrator left. Every
 * refusal comes before any change: the name's, then the role's and the status's own rules.
 *
 * @example
 * const account = await updateAccount(ctx, actor, 'acc_…', { role: 'admin' });
 */
export async function updateAccount(
  deps: Deps,
  actor: Actor,
  id: string,
  changes: AccountChanges,
  precondition?: Precondition<AccountRecord>,
): Promise<AccountRecord> {
  requireAdminWrite(actor);
  const target = await accountById(deps, id);
  // The first write compares the version If-Match was checked on; once it won, the rest follow.
  let version = checkedVersion(target, target.version, precondition);
  const first = () => {
    const taken = version;
    version = undefined;
    return taken;
  };
  const { name, role, status } = changes;
  if (name !== undefined) nameOf(name);
  await asActor(actor, async () => {
    if (role !== undefined && role !== target.role) {
      await setAccountRole(deps, actor.account, target, role, first());
      await recordAct(deps, actor, 'admin.set_role', target.id, role);
    }
    if (status !== undefined && status !== target.status) {
      await setAccountStatus(deps, actor.account, target, status, first());
      await recordAct(deps, actor, status === 'active' ? 'admin.enable_account' : 'admin.disable_account', target.id);
    }
    if (name !== undefined) {
      await rename(deps, target, name, first());
      await recordAct(deps, actor, 'admin.rename_account', target.id, nameOf(name));
    }
  });
  return accountById(deps, target.id);
}

/**
 * An admin vouches for the account's email.
 *
 * @example
 * await verifyAccountEmail(ctx, actor, 'acc_…');
 */
export async function verifyAccountEmail(deps: Deps, actor: Actor, id: string): Promise<AccountRecord> {
  requireAdminWrite(actor);
  const target = await accountById(deps, id);
  await asActor(actor, () => verifyEmailByAdmin(deps, target));
  await recordAct(deps, actor, 'admin.verify_email', target.id, target.email);
  return accountById(deps, target.id);
}

/**
 * A new one-time setup link for the account (someone who lost their passkey or password), made
 * by the actor's account: it ends if that account is disabled. It needs a fresh authentication
 * (an API key is refused), the account is told by mail, and no account makes one for itself (a
 * session would otherwise sign itself in again by the link); the operator at the CLI, who has
 * no account, may make one for anyone, a locked-out sole admin included.
 *
 * @example
 * const { link } = await createSetupLink(ctx, actor, 'acc_…');
 */
export async function createSetupLink(
  deps: MailingDeps,
  actor: Actor,
  id: string,
): Promise<{ account: AccountRecord; link: IssuedLink }> {
  requireAdminWrite(actor);
  requireFreshAuthentication(deps, actor, 'make a setup link');
  const account = await accountById(deps, id);
  if (actor.account?.id === account.id)
    throw new AccessDenied(
      'You cannot make a setup link for your own account: change your passkeys and password on your account page, or ask another administrator.',
    );
  return { account, link: await setupLink(deps, actor, account) };
}

async function setupLink(deps: MailingDeps, actor: Actor, account: AccountRecord): Promise<IssuedLink> {
  const link = await issueLink(deps, 'setup', { accountId: account.id, createdBy: actor.account?.id });
  await recordAct(deps, actor, 'admin.setup_link', account.id);
  await mailCredentialMade(
    deps,
    actor,
    account,
    `A one-time setup link, which signs in once until ${new Date(link.expiresAt * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC, was made for your agentauth account`,
  );
  return link;
}

/**
 * An invitation link made by the actor's account (CONSOLE_SIGNUP invite or open): it makes one
 * member account, and ends if its maker is disabled. A credential, so it needs a fresh
 * authentication, and the maker is told by mail (a link they did not make is noticed).
 *
 * @example
 * const invitation = await createInvitation(ctx, actor); // { url, path, expiresAt }
 */
export async function createInvitation(deps: MailingDeps, actor: Actor): Promise<IssuedLink> {
  requireWrite(actor);
  if (deps.config.consoleSignup === 'closed' || actor.account === null)
    throw new AccessDenied('Invitations are closed on this server: administrators create accounts.');
  requireFreshAuthentication(deps, actor, 'make an invitation link');
  const link = await issueLink(deps, 'invite', { role: 'member', createdBy: actor.account.id });
  await recordAct(deps, actor, 'account.invite', null);
  await mailCredentialMade(
    deps,
    actor,
    actor.account,
    'An invitation link, which makes one member account, was made from your agentauth account',
  );
  return link;
}

/**
 * Every unused setup and invitation link, whoever made it, oldest first.
 *
 * @example
 * const links = await listLinks(ctx, actor);
 */
export async function listLinks(deps: Deps, actor: Actor): Promise<OutstandingLink[]> {
  requireAdmin(actor);
  return outstandingLinks(deps);
}

/**
 * Revokes any unused setup or invitation link, whoever made it.
 *
 * @example
 * await revokeLink(ctx, actor, 'a3f09c1e5b7d2468');
 */
export async function revokeLink(deps: Deps, actor: Actor, linkId: string): Promise<AccountLinkRecord> {
  requireAdminWrite(actor);
  const link = await revokeOutstandingLink(deps, linkId);
  await recordAct(deps, actor, 'admin.revoke_link', link.account_id ?? link.created_by, `${link.purpose} ${linkId}`);
  return link;
}
