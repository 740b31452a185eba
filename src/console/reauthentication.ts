/**
 * Fresh authentication before a change to how an account signs in (docs/design.md §11): a
 * session alone (a browser left open, a stolen cookie) must not add its own passkey, remove the
 * owner's password and end the owner's sessions. Adding or removing a passkey or a password
 * needs a sign-in, a password or a passkey with user verification within CONSOLE_REAUTH_WINDOW
 * seconds (the rule is the management core's, src/management/credentials.ts, which making an
 * API key or a link needs too); the owner is told of every such change by mail (where SMTP is
 * configured), and each is a console event. A setup link to an account that already has a way
 * to sign in is no such proof: its session (`recovery`) may only set a new password, for as
 * long as a sign-in counts as fresh.
 */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Context } from '../context.ts';
import type { AccountRecord } from '../store/accounts.ts';
import { passwordMatches } from '../domain/accounts.ts';
import { InvalidField, InsufficientUserAuthentication } from '../errors.ts';
import { consoleActor } from '../management/actor.ts';
import { CONFIRM_FIRST, freshlyAuthenticated } from '../management/credentials.ts';
import { recordConsoleEvent } from './events.ts';
import { confirmWithPasskey } from './passkeys.ts';
import type { SignedIn } from './sessions.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'config'>;

/** Whether the session's last proof of who is at the keyboard is recent enough for a sensitive change. */
export function isFreshlyAuthenticated(deps: Pick<Context, 'clock' | 'config'>, signedIn: SignedIn): boolean {
  const { account, session } = signedIn;
  return freshlyAuthenticated(deps, consoleActor(account, null, { authenticatedAt: session.authenticated_at }));
}

/**
 * Whether the account has a way to sign in: a password or a passkey.
 *
 * @example
 * const method = (await hasSignInMethod(ctx, account)) ? 'recovery' : 'link'; // a setup link's session
 */
export async function hasSignInMethod(deps: Pick<Context, 'store'>, account: AccountRecord): Promise<boolean> {
  return account.password_hash !== null || (await deps.store.passkeys.list(account.id)).length > 0;
}

/**
 * Throws InsufficientUserAuthentication unless the session authenticated recently. An account with no
 * way to sign in yet (just set up by a link) adds its first one without: it has nothing to
 * confirm with, and nobody could sign in to it anyway.
 *
 * @example
 * await requireFreshAuthentication(ctx, request.signedIn!); // before adding a passkey
 */
export async function requireFreshAuthentication(deps: Deps, signedIn: SignedIn): Promise<void> {
  if (isFreshlyAuthenticated(deps, signedIn)) return;
  if (!(await hasSignInMethod(deps, signedIn.account))) return;
  throw new InsufficientUserAuthentication(CONFIRM_FIRST);
}

/**
 * Whether the session may set a new password without the current one or a confirmation: one
 * signed in by a setup link to an account that already had a way to sign in (`recovery`), within
 * CONSOLE_REAUTH_WINDOW of that sign-in. That is the link's stated purpose (someone who lost
 * their password or passkey); anything else it wants, it confirms first, like any session.
 *
 * @example
 * if (recovering(ctx, request.signedIn!)) await setPassword(ctx, account, password);
 */
export function recovering(deps: Pick<Context, 'clock' | 'config'>, signedIn: SignedIn): boolean {
  const { session } = signedIn;
  return session.method === 'recovery' && deps.clock() < session.created_at + deps.config.consoleReauthWindow;
}

/**
 * Confirms the signed-in person with their password: throttled like a sign-in (the attempt
 * counts against the account and the address before it is checked), recorded when it fails.
 * Throws InvalidField('password') for a wrong password, TooManyRequests when throttled.
 */
export async function confirmWithPassword(
  ctx: Context,
  signedIn: SignedIn,
  password: string,
  ip: string,
): Promise<void> {
  const { account, session } = signedIn;
  const confirmed = await ctx.console.throttle.attempt(account.email_key, ip, async () =>
    account.password_hash !== null && (await passwordMatches(account.password_hash, password)) ? account : null,
  );
  if (!confirmed) {
    await recordConsoleEvent(ctx, account, 'account.reauthenticate_failed', account.id, ip, 'password');
    throw new InvalidField('password', 'The password is wrong.');
  }
  await ctx.store.sessions.markAuthenticated(session.id, ctx.clock());
  await recordConsoleEvent(ctx, account, 'account.reauthenticate', account.id, ip, 'password');
}

/**
 * Confirms the signed-in person with one of their passkeys (user verification required); with
 * `purpose`, only an answer to a challenge made for that purpose (an approval's decision) counts.
 */
export async function confirmWithOwnPasskey(
  ctx: Context,
  signedIn: SignedIn,
  challengeId: string,
  response: AuthenticationResponseJSON,
  ip: string,
  purpose?: string,
): Promise<void> {
  const { account, session } = signedIn;
  if (!(await confirmWithPasskey(ctx, account, challengeId, response, purpose))) {
    await recordConsoleEvent(ctx, account, 'account.reauthenticate_failed', account.id, ip, 'passkey');
    throw new InvalidField('passkey', 'That passkey could not confirm it is you. Try again, or use your password.');
  }
  await ctx.store.sessions.markAuthenticated(session.id, ctx.clock());
  await recordConsoleEvent(ctx, account, 'account.reauthenticate', account.id, ip, 'passkey');
}

/**
 * Tells the owner that a way to sign in to their account changed, by mail where SMTP_URL is
 * set, so that a change they did not make is noticed. A mail that cannot be sent does not undo
 * the change (it is logged by the caller's `warn`).
 *
 * @example
 * await notifySignInMethodChange(ctx, account, 'A passkey named "Laptop" was added', request.ip, (e) => request.log.warn(e));
 */
export async function notifySignInMethodChange(
  ctx: Pick<Context, 'mailer' | 'config'>,
  account: AccountRecord,
  change: string,
  ip: string,
  warn: (error: unknown) => void,
): Promise<void> {
  const mailer = ctx.mailer;
  if (mailer === null) return;
  try {
    await mailer.send({
      to: account.email,
      subject: 'A sign-in method of your agentauth account changed',
      text:
        `Hello${account.name ? ` ${account.name}` : ''},\n\n${change} on your agentauth account (${account.email}), from the address ${ip}.\n\n` +
        `If this was you, there is nothing to do. If it was not, sign in at ${ctx.config.baseUrl}/console/account, ` +
        'end the sessions you do not know, and check your passkeys and password; or ask an administrator for help.\n',
    });
  } catch (error) {
    warn(error);
  }
}
