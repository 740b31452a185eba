/** The pages' static files under /assets, and /favicon.ico (docs/design.md §4, §11). */
import type { FastifyInstance } from 'fastify';
import { ASSETS } from './assets.ts';

export async function assetRoutes(app: FastifyInstance): Promise<void> {
  // Browsers ask for it on every page; there is none, and a 404 would be logged as a console error.
  app.get('/favicon.ico', async (_request, reply) =>
    reply.code(204).header('cache-control', 'public, max-age=86400').send(),
  );

  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = ASSETS.get(request.params.name);
    if (!asset) return reply.code(404).send({ error: 'not_found', error_description: 'No such asset.' });
    return reply
      .headers({
        'content-type': asset.type,
        'cache-control': 'public, max-age=300',
        'x-content-type-options': 'nosniff',
      })
      .send(asset.body);
  });
}
