/** (to be written) */
import type { FastifyInstance } from 'fastify';
import type { ConsoleScope } from './index.ts';

export function agentRoutes(_scope: FastifyInstance, _area: ConsoleScope): void {}
