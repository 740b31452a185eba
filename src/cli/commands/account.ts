/** `agentauth account …`: console accounts (the people who sign in to /console). */
import type { Command } from 'commander';
import { createAccount, emailOf, issueLink, setAccountStatus } from '../../console/accounts.ts';
import { InvalidField } from '../../errors.ts';
import { recordConsoleEvent } from '../../console/events.ts';
import type { Context } from '../../context.ts';
import type { AccountRecord } from '../../store/console-types.ts';
import { isoTime, print, publicUrl, UNKNOWN_PUBLIC_URL, withContext } from '../common.ts';

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
export async function accountByEmail(ctx: Context, raw: string): Promise<AccountRecord> {
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

/** A setup link as the CLI shows it: the whole URL only where it knows the server's public URL. */
interface SetupLink {
  /** Null when BASE_URL is not set (see publicUrl). */
  url: string | null;
  path: string;
  expiresAt: number;
}

/** A one-time setup link for the account (it signs them in once; they then add a passkey or a password). */
async function setupLink(ctx: Context, account: AccountRecord): Promise<SetupLink> {
  const link = await issueLink(ctx, 'setup', { accountId: account.id, ttl: ctx.config.consoleLinkTtl });
  await recordConsoleEvent(ctx, null, 'admin.setup_link', account.id, null, 'cli');
  return { url: publicUrl(ctx.config) === null ? null : link.url, path: link.path, expiresAt: link.expiresAt };
}

const setupLinkJson = (link: SetupLink) => ({
  setup_link: link.url,
  setup_link_path: link.path,
  setup_link_expires_at: isoTime(link.expiresAt),
});

function setupLinkText(link: SetupLink): string {
  const until = new Date(link.expiresAt * 1000).toISOString();
  return link.url
    ? `setup link: ${link.url}\n(the link works once, until ${until}; open it in your browser, or send it to the person it is for)`
    : `setup link: ${link.path}\n${UNKNOWN_PUBLIC_URL}\n(the link works once, until ${until})`;
}

/** What --help says of the link in the JSON, for `account create` and `account setup-link`. */
const SETUP_LINK_HELP = `
The setup link is the server's public URL (BASE_URL) followed by a path. Where this command's
environment has no BASE_URL, it cannot know the server's address (the server makes it from its
own PORT), so it prints the path alone and says so: open that path on the server's address.
With --json: setup_link is the whole link, or null without BASE_URL; setup_link_path is the
path, always; setup_link_expires_at is when the link stops working.`;

export function accountCommand(program: Command): void {
  const account = program.command('account').description('manage console accounts (people who sign in to /console)');
  account
    .command('create')
    .description('create a console account; prints a one-time setup link to send to the person')
    .requiredOption('--email <email>', 'their email (unique, case-insensitive)')
    .option('--name <name>', 'their name')
    .option('--admin', 'make them an administrator (default: member)')
    .option('--json', 'print JSON')
    .addHelpText('after', SETUP_LINK_HELP)
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
        { ...publicAccount(created), ...setupLinkJson(link) },
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
    .addHelpText('after', SETUP_LINK_HELP)
    .action(async (email: string, options: { json?: boolean }) => {
      const { target, link } = await withContext(async (ctx) => {
        const target = await accountByEmail(ctx, email);
        return { target, link: await setupLink(ctx, target) };
      });
      print(
        !!options.json,
        { account_id: target.id, email: target.email, ...setupLinkJson(link) },
        `${setupLinkText(link)}${target.status === 'active' ? '' : `\nnote: ${target.email} is disabled; the link works once the account is enabled`}`,
      );
    });
}
