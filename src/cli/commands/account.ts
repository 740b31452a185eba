/** `agentauth account …`: console accounts (the people who sign in to /console). */
import type { Command } from 'commander';
import { createAccount, emailOf, issueLink, setAccountStatus } from '../../console/accounts.ts';
import { InvalidField } from '../../errors.ts';
import { recordConsoleEvent } from '../../console/events.ts';
import type { Context } from '../../context.ts';
import type { AccountRecord } from '../../store/console-types.ts';
import { isoTime, print, withContext } from '../common.ts';

const publicAccount = (a: AccountRecord) => ({
  account_id: a.id,
  email: a.email,
  name: a.name,
  role: a.role,
  status: a.status,
  email_verified: a.email_verified,
  created_at: isoTime(a.created_at),
  last_sign_in_at: isoTime(a.last_sign_in_at),
});

/** The account with this email (any case), or an error naming it. */
async function accountByEmail(ctx: Context, raw: string): Promise<AccountRecord> {
  let key: string;
  try {
    key = emailOf(raw).key;
  } catch {
    throw new Error(`${raw} is not an email address`);
  }
  const account = await ctx.store.console.findAccountByEmail(key);
  if (!account) throw new Error(`no account with the email ${raw}`);
  return account;
}

/** A one-time setup link for the account (it signs them in once; they then add a passkey or a password). */
async function setupLink(ctx: Context, account: AccountRecord): Promise<{ url: string; expiresAt: number }> {
  const link = await issueLink(ctx, 'setup', { accountId: account.id, ttl: ctx.config.consoleLinkTtl });
  await recordConsoleEvent(ctx, null, 'admin.setup_link', account.id, null, 'cli');
  return link;
}

const setupLinkText = (link: { url: string; expiresAt: number }) =>
  `setup link: ${link.url}\n(the link works once, until ${new Date(link.expiresAt * 1000).toISOString()}; open it in your browser, or send it to the person it is for)`;

export function accountCommand(program: Command): void {
  const account = program.command('account').description('manage console accounts (people who sign in to /console)');
  account
    .command('create')
    .description('create a console account; prints a one-time setup link to send to the person')
    .requiredOption('--email <email>', 'their email (unique, case-insensitive)')
    .option('--name <name>', 'their name')
    .option('--admin', 'make them an administrator (default: member)')
    .option('--json', 'print JSON')
    .action(async (options: { email: string; name?: string; admin?: boolean; json?: boolean }) => {
      const { created, link } = await withContext(async (ctx) => {
        let created: AccountRecord;
        try {
          created = await createAccount(ctx, {
            email: options.email,
            name: options.name,
            role: options.admin ? 'admin' : 'member',
          });
        } catch (error) {
          // The console's field messages, as one line about what was given.
          if (error instanceof InvalidField) throw new Error(`${options.email}: ${error.description}`);
          throw error;
        }
        await recordConsoleEvent(ctx, null, 'admin.create_account', created.id, null, 'cli');
        return { created, link: await setupLink(ctx, created) };
      });
      print(
        !!options.json,
        { ...publicAccount(created), setup_link: link.url, setup_link_expires_at: isoTime(link.expiresAt) },
        `account_id: ${created.id}\nemail:      ${created.email}\nrole:       ${created.role}\n${setupLinkText(link)}`,
      );
    });
  account
    .command('list')
    .description('list console accounts')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const accounts = await withContext((ctx) => ctx.store.console.listAccounts());
      print(
        !!options.json,
        { accounts: accounts.map(publicAccount) },
        accounts
          .map((a) => `${a.id}  ${a.status.padEnd(8)}  ${a.role.padEnd(6)}  ${a.email}${a.name ? `  (${a.name})` : ''}`)
          .join('\n') || '(no accounts)',
      );
    });
  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    account
      .command(`${name} <email>`)
      .description(
        name === 'disable' ? 'disable an account: it is signed out everywhere and cannot sign in' : 'enable an account',
      )
      .option('--json', 'print JSON')
      .action(async (email: string, options: { json?: boolean }) => {
        const changed = await withContext(async (ctx) => {
          const target = await accountByEmail(ctx, email);
          await setAccountStatus(ctx, null, target, status);
          await recordConsoleEvent(ctx, null, `admin.${name}_account`, target.id, null, 'cli');
          return target;
        });
        print(
          !!options.json,
          { account_id: changed.id, email: changed.email, status },
          `${changed.email} is ${status}`,
        );
      });
  }
  account
    .command('setup-link <email>')
    .description('a new one-time setup link for an account (someone who lost their passkey or password)')
    .option('--json', 'print JSON')
    .action(async (email: string, options: { json?: boolean }) => {
      const { target, link } = await withContext(async (ctx) => {
        const target = await accountByEmail(ctx, email);
        return { target, link: await setupLink(ctx, target) };
      });
      print(
        !!options.json,
        {
          account_id: target.id,
          email: target.email,
          setup_link: link.url,
          setup_link_expires_at: isoTime(link.expiresAt),
        },
        `${setupLinkText(link)}${target.status === 'active' ? '' : `\nnote: ${target.email} is disabled; the link works once the account is enabled`}`,
      );
    });
}
