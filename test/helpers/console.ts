/**
 * A person in the console over real HTTP: a cookie jar around fetch that posts forms with the
 * CSRF token of the last page it read, as a browser would (Sec-Fetch-Site: same-origin).
 */
import type { Context } from '../../src/context.ts';
import { createAccount } from '../../src/domain/accounts.ts';
import type { AccountRecord, AccountRole } from '../../src/store/accounts.ts';

export interface Page {
  status: number;
  headers: Headers;
  text: string;
  /** Where a redirect points (303), as a path. */
  location: string | null;
}

export class ConsoleSession {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page read. */
  csrf = '';

  constructor(readonly baseUrl: string) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private async page(response: Response): Promise<Page> {
    this.keep(response);
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? /data-csrf="([^"]+)"/.exec(text)?.[1];
    if (token) this.csrf = token;
    const location = response.headers.get('location');
    return {
      status: response.status,
      headers: response.headers,
      text,
      location: location === null ? null : location.replace(this.baseUrl, ''),
    };
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.page(
      await fetch(`${this.baseUrl}${path}`, {
        redirect: 'manual',
        headers: { cookie: this.cookieHeader(), 'sec-fetch-site': 'same-origin', ...headers },
      }),
    );
  }

  /** Posts a form; `_csrf` is the last page's token unless the form sets its own (or null for none). */
  async post(
    path: string,
    form: Record<string, string | null> = {},
    headers: Record<string, string> = {},
  ): Promise<Page> {
    const fields = { _csrf: this.csrf, ...form };
    const body = new URLSearchParams(
      Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== null),
    );
    return this.page(
      await fetch(`${this.baseUrl}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: this.cookieHeader(),
          'sec-fetch-site': 'same-origin',
          origin: new URL(this.baseUrl).origin,
          'content-type': 'application/x-www-form-urlencoded',
          ...headers,
        },
        body,
      }),
    );
  }

  /**
   * Posts a form and follows its 303 as a browser does, to the page it leads to (where what the
   * post showed once is shown); `posted` is the post's own answer.
   */
  async submit(
    path: string,
    form: Record<string, string | null> = {},
    headers: Record<string, string> = {},
  ): Promise<Page & { posted: Page }> {
    const posted = await this.post(path, form, headers);
    if (posted.status !== 303 || posted.location === null) return { ...posted, posted };
    return { ...(await this.get(posted.location)), posted };
  }

  /** Posts JSON with the CSRF token in x-csrf-token, as console.js does. */
  async postJson(
    path: string,
    json: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/json',
        'x-csrf-token': this.csrf,
        ...headers,
      },
      body: JSON.stringify(json),
    });
    this.keep(response);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }
}

export const TEST_PASSWORD = 'correct horse battery staple';

/** An account with a password, made as the CLI makes one. */
export async function createPasswordAccount(
  ctx: Context,
  input: { email?: string; name?: string; role?: AccountRole; password?: string } = {},
): Promise<AccountRecord> {
  return createAccount(ctx, {
    email: input.email ?? `person-${Math.random().toString(36).slice(2, 10)}@example.com`,
    name: input.name,
    role: input.role ?? 'member',
    password: input.password ?? TEST_PASSWORD,
  });
}

/** An account with a password and a passkey (its public key is never checked: no sign-in uses it). */
export async function accountWithPasskey(ctx: Context): Promise<AccountRecord> {
  const account = await createPasswordAccount(ctx);
  await ctx.store.passkeys.insert({
    id: `cred-${account.id}`,
    account_id: account.id,
    public_key: 'x',
    counter: 0,
    transports: null,
    name: 'Laptop',
    created_at: ctx.clock(),
    last_used_at: null,
  });
  return account;
}

/** A console session signed in with the account's password. */
export async function signIn(baseUrl: string, email: string, password = TEST_PASSWORD): Promise<ConsoleSession> {
  const session = new ConsoleSession(baseUrl);
  await session.get('/console/sign-in');
  const answer = await session.post('/console/sign-in', { email, password });
  if (answer.status !== 303) throw new Error(`sign-in failed with ${answer.status}`);
  return session;
}

/** The text of the page's live region (the result of the last action). */
export function noticeOf(page: Page): string {
  return /<div id="notice"[^>]*>([^<]*)<\/div>/.exec(page.text)?.[1] ?? '';
}

/** A value a console page shows in <code id=…> (an id, a secret shown once); throws, naming it, when absent. */
export function codeOf(page: Page, id: string): string {
  const value = new RegExp(`<code id="${id}">([^<]*)</code>`).exec(page.text)?.[1];
  if (value === undefined) throw new Error(`no ${id} on the page (status ${page.status})`);
  return value;
}
