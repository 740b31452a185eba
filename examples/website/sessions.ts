/**
 * Browser sessions for the example website: a random id in an HttpOnly cookie, the data in this
 * process's memory. A real site keeps them in its own session store; nothing here is specific to
 * agentauth.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Session {
  /** A sign-in started by /login and not yet finished at /callback. */
  pending?: { verifier: string; state: string; nonce: string };
  /** Who signed in: the agent's id (sub) and its owner's name and email. */
  user?: { sub: string; name: string; email: string };
}

const COOKIE = 'example_session';
/** Sessions end after 8 hours; an unfinished sign-in's verifier goes with them. */
const LIFETIME_MS = 8 * 60 * 60 * 1000;

export class SessionStore {
  readonly #sessions = new Map<string, { session: Session; expiresAt: number }>();
  readonly #secureCookie: boolean;

  /** `secureCookie`: mark the cookie Secure (the site is served over https). */
  constructor(options: { secureCookie: boolean }) {
    this.#secureCookie = options.secureCookie;
  }

  /** The browser's session, or a new one whose cookie is set on `response`. */
  of(request: IncomingMessage, response: ServerResponse): Session {
    this.#forgetExpired();
    const id = cookieValue(request.headers.cookie, COOKIE);
    const known = id === undefined ? undefined : this.#sessions.get(id);
    if (known) return known.session;
    return this.#start(response, {});
  }

  /**
   * A new id for the same session, once someone has signed in: an id planted in the browser
   * before sign-in (session fixation) is then worth nothing.
   */
  renew(request: IncomingMessage, response: ServerResponse, session: Session): void {
    const id = cookieValue(request.headers.cookie, COOKIE);
    if (id !== undefined) this.#sessions.delete(id);
    this.#start(response, session);
  }

  end(request: IncomingMessage, response: ServerResponse): void {
    const id = cookieValue(request.headers.cookie, COOKIE);
    if (id !== undefined) this.#sessions.delete(id);
    response.appendHeader(
      'set-cookie',
      `${COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${this.#secureCookie ? '; Secure' : ''}`,
    );
  }

  #start(response: ServerResponse, session: Session): Session {
    const id = randomBytes(32).toString('base64url');
    this.#sessions.set(id, { session, expiresAt: Date.now() + LIFETIME_MS });
    // SameSite=Lax: the cookie travels with the top-level redirect back from agentauth to /callback.
    response.appendHeader(
      'set-cookie',
      `${COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${LIFETIME_MS / 1000}${this.#secureCookie ? '; Secure' : ''}`,
    );
    return session;
  }

  #forgetExpired(): void {
    const now = Date.now();
    for (const [id, entry] of this.#sessions) if (entry.expiresAt <= now) this.#sessions.delete(id);
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const [key, ...value] = pair.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}
