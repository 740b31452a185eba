/**
 * Agents written for the original auth-agent service (issue 21) find the request id with that
 * service's SDKs' extractRequestId / extract_request_id, which scan the authorization page's
 * HTML as fetched, not the live DOM. The page carries the id for them in a data block the
 * browser never executes (docs/design.md §4), and its CSP stays as strict as before.
 *
 * python3 is required, as for test/agent-sdk-python.test.ts: without it the Python case fails
 * saying so. The Chromium case runs when /usr/bin/chromium is installed.
 */
import { spawnSync } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeUrl, type Party, pkcePair, setupParty, startFlow } from './helpers/flow.ts';
import { cspViolations, haveChromium, launchChromium, watchedPage } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const PYTHON = process.env.PYTHON ?? 'python3';

/**
 * The original SDKs' patterns, tried in this order, the first match's group 1 being the id.
 * TypeScript: github.com/auth-agent/auth-agent, Auth_Agent/sdk/src/agent/auth-agent-agent-sdk.ts
 * (AuthAgentAgentSDK.extractRequestId, applied with String.prototype.match).
 */
const ORIGINAL_TS_PATTERNS = [
  /window\.authRequest\s*=\s*\{[^}]*request_id:\s*['"]([^'"]+)['"]/,
  /request_id:\s*['"]([^'"]+)['"]/,
  /<script[^>]*>[\s\S]*?request_id[^}]*['"]([^'"]+)['"]/,
];

/**
 * Python: github.com/auth-agent/auth-agent, sdk/agent/auth_agent_agent_sdk.py
 * (AuthAgentAgentSDK.extract_request_id, applied with re.search), the patterns verbatim.
 */
const ORIGINAL_PY_PATTERNS = String.raw`[
    r'window\.authRequest\s*=\s*\{[^}]*request_id:\s*[\'"]([^\'"]+)[\'"]',
    r'request_id:\s*[\'"]([^\'"]+)[\'"]',
    r'<script[^>]*>[\s\S]*?request_id[^}]*[\'"]([^\'"]+)[\'"]',
]`;

interface Found {
  /** Which pattern matched first (0 is the window.authRequest one). */
  pattern: number;
  requestId: string;
}

function originalTsExtract(html: string): Found | null {
  for (const [pattern, regex] of ORIGINAL_TS_PATTERNS.entries()) {
    const match = html.match(regex);
    if (match) return { pattern, requestId: match[1]! };
  }
  return null;
}

function originalPyExtract(html: string): Found | null {
  const script = `import json, re, sys
html = sys.stdin.read()
for i, pattern in enumerate(${ORIGINAL_PY_PATTERNS}):
    match = re.search(pattern, html)
    if match:
        print(json.dumps({"pattern": i, "requestId": match.group(1)}))
        break
else:
    print("null")
`;
  const run = spawnSync(PYTHON, ['-c', script], { input: html, encoding: 'utf8' });
  if (run.error || run.status !== 0) {
    throw new Error(
      `This test needs ${PYTHON} on PATH (CI installs Debian's python3): ${run.error?.message ?? run.stderr}`,
    );
  }
  return JSON.parse(run.stdout) as Found | null;
}

/** The CSP of the authorization page (docs/design.md §4), for a client whose redirect URI is on localhost:8080. */
const EXPECTED_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self' http://localhost:8080; frame-ancestors 'none'; base-uri 'none'";

/** The data block as the page serves it, for `id`. */
function dataBlock(id: string): string {
  return `<script type="text/plain" id="auth-request">window.authRequest = { request_id: '${id}' };</script>`;
}

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
});
afterAll(() => server?.close());

describe("the original auth-agent SDKs' extractRequestId on the page as fetched", () => {
  it("the TypeScript SDK's patterns find the real request id, with its window.authRequest pattern", async () => {
    const { page, requestId } = await startFlow(server, party);
    expect(requestId).toMatch(/^req_[A-Za-z0-9_-]+$/);
    expect(originalTsExtract(page)).toEqual({ pattern: 0, requestId });
    // Its fallback request_id: '…' finds the same id.
    expect(page.match(ORIGINAL_TS_PATTERNS[1]!)?.[1]).toBe(requestId);
  });

  it("the Python SDK's patterns (python3, re.search) find the real request id", async () => {
    const { page, requestId } = await startFlow(server, party);
    expect(originalPyExtract(page)).toEqual({ pattern: 0, requestId });
  });

  it('the id sits in a text/plain data block once, and the CSP is unchanged (no inline script allowed)', async () => {
    const { page, requestId, response } = await startFlow(server, party);
    expect(response.headers.get('content-security-policy')).toBe(EXPECTED_CSP);
    expect(page).toContain(dataBlock(requestId));
    expect(page.match(/window\.authRequest/g)).toHaveLength(1);
    // Every script element is the external script or the data block: nothing inline to execute.
    const tags = page.match(/<script\b[^>]*>/gi) ?? [];
    expect(tags.sort()).toEqual([
      '<script src="/assets/authorize.js" defer>',
      '<script type="text/plain" id="auth-request">',
    ]);
  });
});

describe.skipIf(!haveChromium)('the page with the data block in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  it('loads without a CSP violation, never runs the block, shows nothing of it, and authorize.js still sets window.authRequest', async () => {
    const context = await browser.newContext();
    try {
      const watched = await watchedPage(context);
      const { page } = watched;
      const response = await page.goto(
        authorizeUrl(server, {
          client_id: party.clientId,
          redirect_uri: party.redirectUri,
          response_type: 'code',
          state: 'original-sdk',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toBe(EXPECTED_CSP);
      const requestId = (await page.locator('meta[name="request-id"]').getAttribute('content'))!;
      expect(requestId).toMatch(/^req_/);

      await page.waitForFunction(() => (window as unknown as { authRequest?: unknown }).authRequest !== undefined);
      expect(
        await page.evaluate(
          () => (window as unknown as { authRequest: { request_id: string } }).authRequest.request_id,
        ),
      ).toBe(requestId);

      // The block is there, typed as data, and what the original patterns read in it is the id.
      const block = page.locator('script#auth-request');
      expect(await block.count()).toBe(1);
      expect(await block.getAttribute('type')).toBe('text/plain');
      expect(originalTsExtract((await block.textContent())!)).toEqual({ pattern: 0, requestId });
      // A person sees nothing of it.
      expect(await block.isVisible()).toBe(false);
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, what a person sees, is the point
      expect(await page.evaluate(() => document.body.innerText)).not.toContain('authRequest');

      // Had Chromium tried to run it, the CSP (no inline script) would have refused it and said so.
      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
