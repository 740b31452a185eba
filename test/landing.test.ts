/** `/` leads a person somewhere useful: a short page saying what this server is (issue 10, item 7). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { BASE_URL: "https://id.example/it's" } });
});
afterAll(() => server.close());

describe('GET /', () => {
  it('is an HTML page naming the issuer, with the discovery links, not a JSON 404', async () => {
    const response = await fetch(`${server.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(response.headers.get('set-cookie')).toBeNull();
    const page = await response.text();
    expect(page).toContain('<h1>agentauth</h1>');
    expect(page).toContain('<code id="issuer">https://id.example/it&#39;s</code>');
    expect(page).toContain('<a href="https://id.example/it&#39;s/.well-known/openid-configuration">');
    expect(page).toContain('<link rel="stylesheet" href="/assets/agentauth.css">');
    expect(page).toContain('<a id="console-link" href="/console">console</a>');
  });

  it('answers HEAD with the same headers and no body, and other paths still get the JSON 404', async () => {
    const head = await fetch(`${server.url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await head.text()).toBe('');
    const unknown = await fetch(`${server.url}/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'not_found', error_description: 'No such endpoint.' });
  });
});
