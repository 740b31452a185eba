/** The landing page at /: a person who opens the issuer's address learns what it is (docs/design.md §4). */
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.ts';
import { pageHeaders } from '../../web/layout.ts';
import { landingPage } from '../pages/landing-page.ts';

export async function landingRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const landing = landingPage(ctx.config.baseUrl);
  app.get('/', async (_request, reply) => reply.headers(pageHeaders()).send(landing));
}
