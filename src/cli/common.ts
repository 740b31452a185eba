/** What the management commands share: the context they work in, and how they print. */
import { type Config, isSet, loadConfig } from '../config.ts';
import { emailOf } from '../domain/accounts.ts';
import type { Context } from '../context.ts';
import { createContext } from '../app.ts';
import { resolveJwtSecret } from '../server.ts';
import { inWords } from '../store/diagnosis.ts';
import { databaseName, openStore } from '../store/open.ts';
import { actingAs } from '../domain/webhooks/actor.ts';

/**
 * The server's public URL, as a command run beside it can know it: the issuer of the server's
 * own configuration (loadConfig) when BASE_URL is set; null otherwise, since the server then
 * makes it from its PORT, which this command's environment may not share. A command prints no
 * guessed address: UNKNOWN_PUBLIC_URL says what to do instead.
 */
export function publicUrl(config: Config): string | null {
  return isSet('BASE_URL') ? config.baseUrl : null;
}

/** What a command says beside a path that it cannot make a whole link of (publicUrl is null). */
export const UNKNOWN_PUBLIC_URL =
  "BASE_URL is not set, so this command does not know the server's address: open the path on the server's own address (where its console is), or set BASE_URL to the server's public URL to print the whole link.";

export const warn = (message: string) => process.stderr.write(`warning: ${message}\n`);

/** The operator's log for what fails without stopping the command (a mail): a warning line on stderr. */
export const operatorLog = {
  warn: (details: object, message: string) => {
    const cause = (details as { err?: unknown }).err;
    warn(cause instanceof Error ? `${message}: ${cause.message}` : message);
  },
};

/**
 * Runs `work` on the database DATABASE_URL names, which must be there: a command other than
 * serve and migrate never makes one (a mistyped or relative DATABASE_URL would otherwise give an
 * empty database whose links fail). It says on stderr which database it used, keeping stdout for
 * what it prints (--json).
 *
 * @example
 * await withContext((ctx) => localManagement(ctx).listAgents());
 */
export async function withContext<T>(work: (ctx: Context) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config.databaseUrl, { poolSize: 1, create: false }).catch((error: unknown) => {
    throw inWords(error, config.databaseUrl);
  });
  process.stderr.write(`database: ${databaseName(config.databaseUrl)}\n`);
  try {
    await store.migrate().catch((error: unknown) => {
      throw inWords(error, config.databaseUrl);
    });
    const ctx = await createContext(
      config,
      store,
      resolveJwtSecret(config, () => {}),
    );
    // What a command changes is announced as the CLI's doing (webhook events' actor).
    return await actingAs({ type: 'cli' }, () => work(ctx));
  } finally {
    await store.close();
  }
}

export function print(json: boolean, value: object, text: string): void {
  // JSON.stringify escapes C0 already; DEL and C1 are escaped here, which leaves the same value.
  process.stdout.write(`${json ? terminalSafe(JSON.stringify(value)) : terminalSafe(text, { lines: true })}\n`);
}

/** C0 controls (ESC among them), DEL and C1 controls (Unicode's Cc): what a terminal may act on rather than show. */
const CONTROL = /\p{Cc}/gu;

/**
 * Text as a terminal shows it without acting on it: every control character (C0, whose ESC starts
 * the sequences that move the cursor, recolour, retitle or rewrite the screen; DEL; C1, whose
 * CSI does the same in one byte) written as a visible escape, `\u001b`. With `lines`, the line
 * breaks the command itself wrote are kept. What a server says is printed only through this.
 *
 * @example
 * terminalSafe('bad\u001b[2Jkey'); // 'bad\\u001b[2Jkey'
 */
export function terminalSafe(text: string, options: { lines?: boolean } = {}): string {
  return text.replace(CONTROL, (char) =>
    options.lines && char === '\n' ? char : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export const collect = (value: string, previous: string[]) => [...previous, value];

/**
 * The lookup key of an email given on the command line (any case), or an error naming it.
 *
 * @example
 * emailKey('Ada@Example.com'); // 'ada@example.com'
 */
export function emailKey(raw: string): string {
  try {
    return emailOf(raw).key;
  } catch {
    throw new Error(`${raw} is not an email address`);
  }
}
