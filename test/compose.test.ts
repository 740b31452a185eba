/**
 * compose.yaml and its load balancer's configuration (docs/guides/operator.md, Containers): what an
 * operator relies on, read from the files, since no image registry can be reached here and Compose
 * cannot run (test/container.test.ts runs the image itself). Two agentauth nodes from the
 * repository's Dockerfile share one secret and one PostgreSQL, read-only and non-root, with health
 * checks the start order waits for; HAProxy sends requests only to nodes whose /readyz answers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

interface Service {
  image?: string;
  build?: string | { context: string };
  read_only?: boolean;
  user?: string;
  tmpfs?: string[];
  environment?: Record<string, string>;
  secrets?: string[];
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
}
const compose = parse(read('compose.yaml')) as {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
};
const { services } = compose;
const nodes = Object.keys(services).filter((name) => services[name]!.build !== undefined);
const haproxy = read('deploy/haproxy.cfg');

describe('compose.yaml', () => {
  it('has PostgreSQL, two agentauth nodes built from the Dockerfile and a load balancer, on official images', () => {
    expect(nodes).toEqual(['agentauth-1', 'agentauth-2']);
    for (const node of nodes) expect(services[node]!.build).toBe('.');
    expect(services.postgres!.image).toMatch(/^postgres:\d+/);
    expect(services['load-balancer']!.image).toMatch(/^haproxy:\d/);
    expect(Object.keys(services).sort()).toEqual(['agentauth-1', 'agentauth-2', 'load-balancer', 'postgres']);
  });

  it('runs the nodes read-only as uid 1000, with no writable mount, and the load balancer read-only too', () => {
    for (const node of nodes) {
      expect(services[node]).toMatchObject({ read_only: true, user: '1000:1000' });
      expect(services[node]!.tmpfs).toBeUndefined();
      expect(services[node]!.volumes).toBeUndefined();
    }
    expect(services['load-balancer']!.read_only).toBe(true);
  });

  it('gives every node the same secret and database from files, in production', () => {
    const [first, second] = nodes.map((node) => services[node]!);
    expect(first!.environment).toEqual(second!.environment);
    expect(first!.environment).toMatchObject({
      NODE_ENV: 'production',
      JWT_SECRET_FILE: '/run/secrets/jwt_secret',
      DATABASE_URL_FILE: '/run/secrets/database_url',
      TRUST_PROXY: '1',
    });
    // Secrets are files, never values in the environment.
    expect(first!.environment).not.toHaveProperty('JWT_SECRET');
    expect(first!.environment).not.toHaveProperty('DATABASE_URL');
    for (const node of nodes) expect(services[node]!.secrets).toEqual(['database_url', 'jwt_secret']);
    expect(compose.secrets.jwt_secret!.file).toBe('./secrets/jwt_secret');
  });

  it('checks health at /readyz and PostgreSQL with pg_isready, and starts each part once what it needs is healthy', () => {
    for (const node of nodes) {
      expect([services[node]!.healthcheck!.test].flat().join(' ')).toMatch(/^CMD node -e .*127\.0\.0\.1:3000\/readyz/);
      expect(services[node]!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    }
    expect([services.postgres!.healthcheck!.test].flat().join(' ')).toMatch(/pg_isready/);
    expect(services['load-balancer']!.depends_on).toEqual({
      'agentauth-1': { condition: 'service_healthy' },
      'agentauth-2': { condition: 'service_healthy' },
    });
    expect(services['load-balancer']!.volumes).toEqual(['./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
  });
});

describe('deploy/haproxy.cfg', () => {
  it('checks every node at /readyz, expecting 200, and names each node of compose.yaml', () => {
    expect(haproxy).toMatch(/^\s*option httpchk GET \/readyz$/m);
    expect(haproxy).toMatch(/^\s*http-check expect status 200$/m);
    expect(haproxy).toMatch(/^\s*default-server check /m);
    const servers = [...haproxy.matchAll(/^\s*server (\S+) (\S+)/gm)].map(([, name, address]) => ({ name, address }));
    expect(servers).toEqual(nodes.map((node) => ({ name: node, address: `${node}:3000` })));
    expect(haproxy).toMatch(/^\s*bind :8080$/m);
    expect(services['load-balancer']!.ports).toEqual(['8080:8080']);
  });

  it('tells the nodes the client address, which TRUST_PROXY=1 believes', () => {
    expect(haproxy).toMatch(/^\s*option forwardfor$/m);
  });
});
