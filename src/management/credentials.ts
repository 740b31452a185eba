/**
 * What every act that makes a credential needs, whatever the door (docs/design.md §11, §17): an
 * API key, a setup link or an invitation lets someone in after the session that made it has
 * ended, so making one is a change of how one signs in. It needs a fresh authentication, and
 * the account it lets in (an invitation: the account that made it) is told by mail.
 *
 * Fresh, by actor: a console session that signed in or confirmed within CONSOLE_REAUTH_WINDOW;
 * an API key never (it is not a person, and a credential minting one that outlives it would undo
 * its revocation); the operator at the CLI always (the database's authority, and the way back in
 * for a sole admin locked out).
 */
import type { Context } from '../context.ts';
import { AccessDenied, InsufficientUserAuthentication } from '../errors.ts';
import type { AccountRecord } from '../store/accounts.ts';
import type { Actor } from './actor.ts';

/** What the console asks of a session that is not fresh, for every change of how one signs in. */
export const CONFIRM_FIRST = 'Confirm it is you first: enter your password or use one of your passkeys.';

/**
 * Whether the actor proved who they are recently enough to change how someone signs in: within
 * CONSOLE_REAUTH_WINDOW seconds for a console session, never for an API key, always for the
 * operator at the CLI.
 *
 * @example
 * if (!freshlyAuthenticated(ctx, actor)) showConfirmation();
 */
export function freshlyAuthenticated(deps: Pick<Context, 'clock' | 'config'>, actor: Actor): boolean {
  if (actor.door === 'cli') return true;
  if (actor.key || actor.authenticatedAt === null) return false;
  return deps.clock() < actor.authenticatedAt + deps.config.consoleReauthWindow;
}

/**
 * Refuses to make a credential without a fresh authentication: an API key gets AccessDenied (403:
 * it can never be fresh), a console session InsufficientUserAuthentication (401: the console asks
 * the person to confirm and brings them back).
 *
 * @example
 * requireFreshAuthentication(ctx, actor, 'make an API key'); // before createApiKey's insert
 */
export function requireFreshAuthentication(deps: Pick<Context, 'clock' | 'config'>, actor: Actor, what: string): void {
  if (freshlyAuthenticated(deps, actor)) return;
  if (actor.key)
    throw new AccessDenied(
      `An API key cannot ${what}: a credential made by a key would outlive the key. Do it in the console, which asks you to confirm it is you, or with the agentauth command beside the server.`,
    );
  throw new InsufficientUserAuthentication(CONFIRM_FIRST);
}

/**
 * Tells `account` by mail (where SMTP_URL is set) that a credential letting someone in was made,
 * by whom and from where, so one they did not make is noticed. A mail that cannot be sent is
 * reported to the actor's log and does not undo the act.
 *
 * @example
 * await mailCredentialMade(ctx, actor, account, 'An API key named "deploy" (read and write) was made for your account');
 */
export async function mailCredentialMade(
  ctx: Pick<Context, 'mailer' | 'config'>,
  actor: Actor,
  account: AccountRecord,
  made: string,
): Promise<void> {
  const mailer = ctx.mailer;
  if (mailer === null) return;
  const by =
    actor.account === null
      ? 'by the server’s operator (the agentauth command)'
      : actor.account.id === account.id
        ? `from the address ${actor.ip ?? 'unknown'}`
        : `by ${actor.account.email}, from the address ${actor.ip ?? 'unknown'}`;
  try {
    await mailer.send({
      to: account.email,
      subject: 'A new way into your agentauth account',
      text:
        `Hello${account.name ? ` ${account.name}` : ''},\n\n${made} (${account.email}), ${by}.\n\n` +
        `If you expected this, there is nothing to do. If not, sign in at ${ctx.config.baseUrl}/console/account, ` +
        'revoke what you do not know (API keys, unused links), end the sessions you do not know, ' +
        'and check your passkeys and password; or ask an administrator for help.\n',
    });
  } catch (error) {
    actor.log?.warn({ err: error }, 'the mail about a new credential could not be sent');
  }
}
