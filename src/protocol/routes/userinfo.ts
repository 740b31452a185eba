/** GET|POST /userinfo with Authorization: Bearer (RFC 6750 §2.1, OpenID Connect Core §5.3). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { userinfo } from '../../domain/tokens.ts';

function bearerToken(request: FastifyRequest): string | undefined {
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

export async function userinfoRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const handler = async (request: FastifyRequest) => userinfo(ctx, bearerToken(request));
  // POST /userinfo needs no body: whatever is sent, of any content type, is ignored.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
  app.route({
    method: ['GET', 'POST'],
    url: '/userinfo',
    handler: async (request, reply) => reply.header('cache-control', 'no-store').send(await handler(request)),
  });
}
