/** To be written (issue 23). */
import type { FastifyInstance } from 'fastify';
import type { ApiScope } from './index.ts';

export async function clientRoutes(_api: FastifyInstance, _scope: ApiScope): Promise<void> {}
