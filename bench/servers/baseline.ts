/**
 * The physical baseline: the least work a Node.js HTTP endpoint can do on this machine. It
 * answers every request with the small JSON body of a pending status check, so the ratio of
 * agentauth's /api/check-status to this server is the cost of agentauth itself (routing,
 * validation, one indexed read, serialization, hooks), not of Node or the network.
 */
import { createServer } from 'node:http';

const body = Buffer.from(JSON.stringify({ status: 'pending' }));

const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  response.end(body);
});
// Like Fastify's default, so neither side wins by dropping idle keep-alive connections earlier.
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');

process.once('SIGTERM', () => server.close(() => process.exit(0)));
