/** What every area of the console's routes is given (see index.ts, which mounts them). */
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import type { Context } from '../../context.ts';
import type { Actor } from '../../management/actor.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import type { SignInMethod } from '../../store/sessions.ts';
import type { BrowserCookie } from '../../web/browser.ts';
import { pageHeaders } from '../../web/layout.ts';
import type { PageContext } from '../pages/shell.ts';
import type { SignedIn } from '../sessions.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body carries a WebAuthn answer, an object, in `response` (the passkey ceremonies). */
    webauthnResponse?: boolean;
    /**
     * Where "Confirm it is you" leads back to when this action needs a fresh authentication
     * (the page its form is on); the account page unless told.
     */
    confirmReturnsTo?: string;
  }
  interface FastifyRequest {
    /** The console session of the request, if any (set for every console route). */
    signedIn: SignedIn | null;
  }
}

/** A console form or query: every field one string, or absent (see the preValidation hook). */
export type Form = Record<string, string | undefined>;

/** What every area's routes get. */
export interface ConsoleScope {
  ctx: Context;
  /** The preHandler of every state-changing route: cross-site check and CSRF token. */
  guard: preHandlerHookHandler;
  session: BrowserCookie;
  /** The signed-in account, or a redirect to the sign-in page. */
  account(request: FastifyRequest): AccountRecord;
  /** The signed-in account as the actor of a management operation (src/management/). */
  actor(request: FastifyRequest): Actor;
  /** The signed-in account and the CSRF token for the page being rendered. */
  page(request: FastifyRequest, reply: FastifyReply): Promise<PageContext & { account: AccountRecord }>;
  /** The CSRF token for a page of someone not signed in. */
  anonymousPage(reply: FastifyReply): Promise<PageContext>;
  /** Sends a console page. */
  send(reply: FastifyReply, body: string, status?: number): FastifyReply;
  /** 303 to a console path, for the POST-redirect-GET of every action. */
  redirect(reply: FastifyReply, path: string): FastifyReply;
  /**
   * 303 to `path`, whose GET shows `value` once (a new secret, a one-time link): it is left for
   * this session in the database (../flash.ts), never in the URL.
   */
  redirectOnce(request: FastifyRequest, reply: FastifyReply, path: string, value: unknown): Promise<FastifyReply>;
  /** What a post of this session left for `path`, the first time it is asked for; null after. */
  takeOnce<T>(request: FastifyRequest, path: string): Promise<T | null>;
  /**
   * Signs the account in: starts a session, sets its cookie (replacing any from before, someone
   * else's on a shared computer) and records the sign-in.
   */
  startSession(
    request: FastifyRequest,
    reply: FastifyReply,
    account: AccountRecord,
    method: SignInMethod,
  ): Promise<void>;
}

/** 303 to a console path (POST-redirect-GET). */
export const redirectTo = (reply: FastifyReply, path: string) =>
  reply.code(303).headers(pageHeaders()).header('location', path).send();
