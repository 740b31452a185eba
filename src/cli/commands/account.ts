/** `agentauth account …`: console accounts (the people who sign in to /console). */
import type { Command } from 'commander';
import { print, UNKNOWN_PUBLIC_URL } from '../common.ts';
import type { AccountView, SetupLink } from '../management.ts';
import { BESIDE_THE_SERVER, requireDatabase, withManagement } from '../target.ts';

/** Why a link is made on the database only: no API key makes a way in (docs/design.md §15). */
const LINKS_NEED_THE_DATABASE = `since no API key makes a setup link (a link made by a key would outlive it): make it in the console, or ${BESIDE_THE_SERVER}`;

/** An account as the command prints it, on the database or a remote server alike. */
const accountJson = (a: AccountView) => ({
  account_id: a.id,
  email: a.email,
  name: a.name,
  role: a.role,
  status: a.status,
  email_verified: a.email_verified,
  created_at: a.created_at,
  last_sign_in_at: a.last_sign_in_at,
});

const setupLinkJson = (link: SetupLink) => ({
  setup_link: link.url,
  setup_link_path: link.path,
  setup_link_expires_at: link.expires_at,
});

function setupLinkText(link: SetupLink): string {
  const until = link.expires_at === null ? '' : `, until ${link.expires_at}`;
  return link.url
    ? `setup link: ${link.url}\n(the link works once${until}; open it in your browser, or send it to the person it is for)`
    : `setup link: ${link.path}\n${UNKNOWN_PUBLIC_URL}\n(the link works once${until})`;
}

/** What --help says of the link in the JSON, for `account create` and `account setup-link`. */
const SETUP_LINK_HELP = `
The setup link is the server's public URL (BASE_URL) followed by a path. Where this command's
environment has no BASE_URL, it cannot know the server's address (the server makes it from its
own PORT), so it prints the path alone and says so: open that path on the server's address.
It needs the database: no API key makes a setup link, so --url and AGENTAUTH_URL are refused.
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
    .action(async (options: { email: string; name?: string; admin?: boolean; json?: boolean }, command: Command) => {
      requireDatabase(command, `account create needs the database, ${LINKS_NEED_THE_DATABASE}`);
      const { account: created, setup_link: link } = await withManagement(command, (management) =>
        management.createAccount({
          email: options.email,
          name: options.name,
          role: options.admin ? 'admin' : 'member',
        }),
      );
      print(
        !!options.json,
        { ...accountJson(created), ...setupLinkJson(link) },
        `account_id: ${created.id}\nemail:      ${created.email}\nrole:       ${created.role}\n${setupLinkText(link)}`,
      );
    });
  account
    .command('list')
    .description('list console accounts')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }, command: Command) => {
      const accounts = await withManagement(command, (management) => management.listAccounts());
      print(
        !!options.json,
        { accounts: accounts.map(accountJson) },
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
      .action(async (email: string, options: { json?: boolean }, command: Command) => {
        const changed = await withManagement(command, async (management) =>
          management.setAccountStatus((await management.accountByEmail(email)).id, status),
        );
        print(
          !!options.json,
          { account_id: changed.id, email: changed.email, status: changed.status },
          `${changed.email} is ${changed.status}`,
        );
      });
  }
  account
    .command('setup-link <email>')
    .description('a new one-time setup link for an account (someone who lost their passkey or password)')
    .option('--json', 'print JSON')
    .addHelpText('after', SETUP_LINK_HELP)
    .action(async (email: string, options: { json?: boolean }, command: Command) => {
      requireDatabase(command, `account setup-link needs the database, ${LINKS_NEED_THE_DATABASE}`);
      const { account: target, setup_link: link } = await withManagement(command, async (management) =>
        management.createSetupLink((await management.accountByEmail(email)).id),
      );
      print(
        !!options.json,
        { account_id: target.id, email: target.email, ...setupLinkJson(link) },
        `${setupLinkText(link)}${target.status === 'active' ? '' : `\nnote: ${target.email} is disabled; the link works once the account is enabled`}`,
      );
    });
}
