/**
 * The way back to the website: the error response of RFC 6749 §4.1.2.1 on a redirect URI known
 * to be good, and the sealed ticket an error page links to instead of the website itself.
 */
import type { Context } from '../../context.ts';
import { InvalidClient, InvalidRequest, type OAuthError } from '../../errors.ts';
import type { ClientRecord } from '../../store/clients.ts';
import { findAuthorizingClient, redirectUriMatches } from '../clients.ts';

/**
 * Where a person on an error page may go back to: the website, told the outcome as RFC 6749
 * §4.1.2.1 says (error, error_description, state, iss on the registered redirect URI). Only
 * ever made once the client and its redirect URI are known good (no open redirect). The page
 * links to `/authorize/return` with a sealed ticket rather than to the website itself, because
 * the state must never appear in a page (agents and anyone shown the page read it).
 */
export interface ReturnTarget {
  siteName: string;
  href: string;
}

interface ReturnTicket {
  /** client_id */
  c: string;
  /** redirect_uri */
  r: string;
  e: string;
  d: string;
  s?: string;
  /** Expiry, epoch seconds. */
  x: number;
}

/** How long the way back stays open: an error page left open for a while still leads home. */
const RETURN_TICKET_TTL = 3600;

const returnTargets = new WeakMap<object, ReturnTarget>();

/** The way back to the website for an error, if the redirect URI was known good when it was thrown. */
export function returnTargetOf(error: unknown): ReturnTarget | undefined {
  return typeof error === 'object' && error !== null ? returnTargets.get(error) : undefined;
}

/** The error, carrying its way back (returnTargetOf) to the page that shows it. */
export function withReturnTarget<E extends OAuthError>(error: E, target: ReturnTarget): E {
  returnTargets.set(error, target);
  return error;
}

/** The way back to a client's redirect URI with an error: a sealed ticket for /authorize/return. */
export function returnTarget(
  ctx: Pick<Context, 'clock' | 'secrets'>,
  client: ClientRecord,
  redirectUri: string,
  error: string,
  description: string,
  state: string | undefined,
): ReturnTarget {
  const ticket: ReturnTicket = {
    c: client.id,
    r: redirectUri,
    e: error,
    d: description,
    ...(state === undefined ? {} : { s: state }),
    x: ctx.clock() + RETURN_TICKET_TTL,
  };
  return {
    siteName: client.name,
    href: `/authorize/return?ticket=${ctx.secrets.returns.seal(JSON.stringify(ticket))}`,
  };
}

/**
 * GET /authorize/return: opens a ticket of returnTarget and answers where to send the browser:
 * the registered redirect URI with the error response. The client and URI are checked again, so
 * a ticket outliving a client's deactivation or a changed redirect URI leads nowhere.
 */
export async function redeemReturnTicket(
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'clientMetadata' | 'secrets'>,
  sealed: string,
): Promise<string> {
  let ticket: ReturnTicket;
  try {
    ticket = JSON.parse(ctx.secrets.returns.open(sealed)) as ReturnTicket;
  } catch {
    throw new InvalidRequest('This link back to the website is not valid.');
  }
  if (!(ticket.x > ctx.clock())) throw new InvalidRequest('This link back to the website has expired.');
  const client = await findAuthorizingClient(ctx, ticket.c);
  if (client?.status !== 'active' || !redirectUriMatches(client, ticket.r))
    throw new InvalidClient('The website of this link is no longer active here.', 400);
  return errorResponseUri(ticket.r, ticket.e, ticket.d, ticket.s, ctx.config.baseUrl);
}

/** The error response of RFC 6749 §4.1.2.1 on a redirect URI known to be good. */
export function errorResponseUri(
  redirectUri: string,
  error: string,
  description: string,
  state: string | undefined,
  iss: string,
): string {
  return withQuery(redirectUri, {
    error,
    error_description: description,
    ...(state === undefined ? {} : { state }),
    iss,
  });
}

/**
 * Adds parameters to a redirect URI, keeping its own query exactly as registered. Values are
 * percent-encoded as RFC 3986 says (a space is %20, not +), so that every query decoder, form
 * style or not, gives back the exact value, the opaque state above all.
 */
export function withQuery(uri: string, params: Record<string, string>): string {
  const query = Object.entries(params)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
  return uri + (uri.includes('?') ? '&' : '?') + query;
}
