/**
 * GET|POST /userinfo (OpenID Connect Core §5.3) with the access token in `Authorization: Bearer`
 * (RFC 6750 §2.1); in a key mode also, on POST, in a form body (§2.2), as the OpenID
 * conformance suite asks (docs/design.md §19).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { userinfo } from '../../domain/tokens.ts';
import { InvalidRequest } from '../../errors.ts';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const FORM = 'application/x-www-form-urlencoded';

function bearerToken(request: FastifyRequest): string | undefined {
  return BEARER.exec(request.headers.authorization ?? '')?.[1];
}

/** RFC 6750 §3.1: a malformed request is 400 invalid_request, with the Bearer challenge saying so. */
function malformed(description: string): InvalidRequest {
  const error = new InvalidRequest(description);
  error.headers['www-authenticate'] = `Bearer error="invalid_request", error_description="${description}"`;
  return error;
}

/**
 * The access token of a request that may carry it in the header or in a POST's form body: one
 * method per request (RFC 6750 §2), never in the URL (a URL is logged and kept in histories).
 */
function presentedToken(request: FastifyRequest): string | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  if (query && Object.hasOwn(query, 'access_token'))
    throw malformed('An access token is never accepted in the URL: send it in the Authorization header.');
  const form = request.method === 'POST' && typeof request.body === 'string' ? new URLSearchParams(request.body) : null;
  const inBody = form?.getAll('access_token') ?? [];
  if (inBody.length === 0) return bearerToken(request);
  if (inBody.length > 1) throw malformed('The form body names access_token more than once.');
  if (/^Bearer\b/i.test(request.headers.authorization ?? ''))
    throw malformed('The access token was sent both in the Authorization header and in the body; send it once.');
  return inBody[0] || undefined;
}

export async function userinfoRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  // With HS256 (the contract) the header is the only way, exactly as it always was; the form body
  // is taken only in a key mode, where OpenID certification is the point.
  const acceptsBody = ctx.signingKeys.algorithm !== null;
  const token = acceptsBody ? presentedToken : bearerToken;
  // Any other body, of any content type, is ignored: POST /userinfo needs none.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  if (acceptsBody) app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.route({
    method: ['GET', 'POST'],
    url: '/userinfo',
    handler: async (request, reply) =>
      reply.header('cache-control', 'no-store').send(await userinfo(ctx, token(request))),
  });
}
