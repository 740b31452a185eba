/**
 * The example website (examples/website): a plain node:http site that signs people in with the
 * stock openid-client, and the drop-in "Sign in with your AI agent" button, driven in a real
 * Chromium against a real agentauth, and over plain HTTP for what a browser need not show.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWebsite, startWebsite } from '../examples/website/server.ts';
import { ARRIVAL_TIMEOUT, haveChromium, launchChromium, watchedPage } from './helpers/browser.ts';
import { CookieJar } from './helpers/cookie-jar.ts';
import { authenticate, metaContent, type Party, postForm } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const BUTTON_NAME = 'Sign in with your AI agent';

let server: TestServer;
let website: RunningWebsite;
let party: Party;
let websiteOrigin: string;
const websiteLog: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  // The redirect URI must be registered before the site starts with its client id: pick the port first.
  const port = await freePort();
  websiteOrigin = `http://127.0.0.1:${port}`;
  const client = await server.createClient({ name: 'Example Website', redirectUris: [`${websiteOrigin}/callback`] });
  const agent = await server.createAgent({ ownerEmail: 'ada@example.com', ownerName: 'Ada Lovelace' });
  party = { ...client, ...agent };
  website = await startWebsite({
    issuer: server.baseUrl,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    port,
    publicUrl: websiteOrigin,
    log: (line) => websiteLog.push(line),
  });
});

afterAll(async () => {
  await website?.close();
  await server?.close();
});

describe('the example website, over HTTP', () => {
  it('registers exactly the redirect URI it will use', () => {
    expect(website.url).toBe(`${websiteOrigin}/`);
    expect(website.redirectUri).toBe(`${websiteOrigin}/callback`);
  });

  it('signs a person in: /login → agentauth → the agent → /callback → "Signed in as", in a new session', async () => {
    const browser = new CookieJar();
    const home = await browser.fetch(website.url);
    expect(await home.text()).toContain(BUTTON_NAME);
    const sessionBefore = browser.get(websiteOrigin, 'example_session');

    const { response: authorizePage, url: authorizeUrl } = await browser.follow(`${websiteOrigin}/login`);
    expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${server.baseUrl}/authorize`);
    // What the site asked for: PKCE S256, state, nonce, the registered redirect URI, the default scope.
    expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizeUrl.searchParams.get('state')).toBeTruthy();
    expect(authorizeUrl.searchParams.get('nonce')).toBeTruthy();
    expect(authorizeUrl.searchParams.get('redirect_uri')).toBe(website.redirectUri);
    expect(authorizeUrl.searchParams.get('scope')).toBe('openid email profile');
    const page = await authorizePage.text();
    expect(authorizePage.status).toBe(200);
    const requestId = metaContent(page, 'request-id')!;

    expect((await authenticate(server, party, requestId)).status).toBe(200);
    const continued = await browser.fetch(new URL('/authorize/continue', server.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request_id: requestId }).toString(),
    });
    expect(continued.status).toBe(302);
    const { response: signedIn, url: landed } = await browser.follow(continued.headers.get('location')!);
    expect(landed.href).toBe(website.url);
    const body = await signedIn.text();
    expect(body).toContain('Signed in as Ada Lovelace (ada@example.com)');
    expect(body).toContain(party.agentId);
    expect(body).not.toContain(BUTTON_NAME);
    // A new session id once signed in: an id planted before sign-in (session fixation) is worth nothing.
    expect(browser.get(websiteOrigin, 'example_session')).not.toBe(sessionBefore);
    const planted = await fetch(website.url, { headers: { cookie: `example_session=${sessionBefore}` } });
    expect(await planted.text()).toContain(BUTTON_NAME);
  });

  it('a callback this browser did not start signs nobody in', async () => {
    // Login CSRF: a victim's browser sent to /callback with someone else's code and state.
    const victim = new CookieJar();
    const callback = await victim.fetch(
      `${website.redirectUri}?code=cod_forged&state=forged&iss=${encodeURIComponent(server.baseUrl)}`,
    );
    expect(callback.status).toBe(400);
    expect(await callback.text()).toContain('This sign-in was not started in this browser');
    expect(await (await victim.fetch(website.url)).text()).toContain(BUTTON_NAME);
  });

  it('a replayed callback is refused: the first one used up the sign-in', async () => {
    const browser = new CookieJar();
    const { response: authorizePage } = await browser.follow(`${websiteOrigin}/login`);
    const requestId = metaContent(await authorizePage.text(), 'request-id')!;
    await authenticate(server, party, requestId);
    const continued = await postForm(
      server,
      '/authorize/continue',
      { request_id: requestId },
      { cookie: browser.header(server.baseUrl) },
    );
    const callbackUrl = continued.headers.get('location')!;
    expect((await browser.fetch(callbackUrl)).status).toBe(303);
    const replay = await browser.fetch(callbackUrl);
    expect(replay.status).toBe(400);
  });

  it('tells the person when they cancelled on the agentauth page', async () => {
    const browser = new CookieJar();
    const { response: authorizePage } = await browser.follow(`${websiteOrigin}/login`);
    const requestId = metaContent(await authorizePage.text(), 'request-id')!;
    const cancelled = await postForm(
      server,
      '/authorize/continue',
      { request_id: requestId, action: 'cancel' },
      { cookie: browser.header(server.baseUrl) },
    );
    expect(cancelled.status).toBe(302);
    const { response } = await browser.follow(cancelled.headers.get('location')!);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('You cancelled the sign-in.');
    expect(websiteLog.at(-1)).toMatch(/access_denied/);
  });

  it('never logs a code, token or secret', () => {
    expect(websiteLog.length).toBeGreaterThan(0);
    expect(websiteLog.join('\n')).not.toMatch(/cod_|rft_|cls_|aas_|eyJ/);
  });

  it('refuses a plain-http issuer that is not on this machine, before any request', async () => {
    const options = { clientId: party.clientId, clientSecret: party.clientSecret, port: 0 };
    await expect(startWebsite({ ...options, issuer: 'http://auth.example.com' })).rejects.toThrow(
      /AGENTAUTH_ISSUER must be https/,
    );
    await expect(startWebsite({ ...options, issuer: 'http://10.0.0.5:3000' })).rejects.toThrow(
      /AGENTAUTH_ISSUER must be https/,
    );
  });

  it('serves the button stylesheet and a page whose policy loads nothing from elsewhere', async () => {
    const css = await fetch(new URL('/agentauth-button.css', website.url));
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(await css.text()).toContain('.agentauth-button');
    const home = await fetch(website.url);
    expect(home.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await home.text()).not.toMatch(/<script|https?:\/\/(?!127\.0\.0\.1)/);
  });
});

describe.skipIf(!haveChromium)('the example website in Chromium', () => {
  let chromium: Browser;

  beforeAll(async () => {
    chromium = await launchChromium();
  });

  afterAll(async () => {
    await chromium?.close();
  });

  it('home page button → agentauth page → the agent authenticates → the page continues → "Signed in as"', async () => {
    const context = await chromium.newContext();
    const watched = await watchedPage(context);
    const { page } = watched;
    await page.goto(website.url);
    await page.getByRole('link', { name: BUTTON_NAME }).click();

    await page.waitForURL((url) => url.href.startsWith(`${server.baseUrl}/authorize?`));
    await expect.poll(() => page.locator('#client-name').textContent()).toBe('Example Website');
    expect(await page.locator('#redirect-host').textContent()).toBe(new URL(websiteOrigin).host);
    const requestId = (await page.locator('meta[name="request-id"]').getAttribute('content'))!;
    expect(await page.locator('#request-id').textContent()).toBe(requestId);

    // The agent, over the back channel; nobody touches the page after this.
    expect((await authenticate(server, party, requestId)).status).toBe(200);
    await page.waitForURL(website.url, { timeout: ARRIVAL_TIMEOUT });
    expect(await page.locator('#signed-in').textContent()).toBe('Signed in as Ada Lovelace (ada@example.com)');
    expect(watched.errors).toEqual([]);
    await context.close();
  });

  it('the button has an accessible name, renders light and dark, and overrides win over the preference', async () => {
    const colours: Record<string, ButtonColours> = {};
    for (const colorScheme of ['light', 'dark'] as const) {
      const context = await chromium.newContext({ colorScheme });
      const page = await context.newPage();
      await page.goto(website.url);
      const button = page.getByRole('link', { name: BUTTON_NAME, exact: true });
      expect(await button.count()).toBe(1);
      // The mark is decoration: the link's accessible name is its text alone.
      expect(await button.ariaSnapshot()).toMatch(/^- link "Sign in with your AI agent"/);
      expect(await button.ariaSnapshot()).not.toMatch(/img/);
      colours[colorScheme] = await buttonColours(page, '.agentauth-button');
      expect(contrast(colours[colorScheme]!.text, colours[colorScheme]!.background)).toBeGreaterThanOrEqual(4.5);
      // The forced variants, side by side with the preference.
      await page.evaluate(() => {
        const original = document.querySelector('.agentauth-button')!;
        for (const variant of ['light', 'dark']) {
          const copy = original.cloneNode(true) as HTMLElement;
          copy.classList.add(`agentauth-button--${variant}`);
          copy.id = `forced-${variant}`;
          original.after(copy);
        }
      });
      colours[`${colorScheme}/forced-light`] = await buttonColours(page, '#forced-light');
      colours[`${colorScheme}/forced-dark`] = await buttonColours(page, '#forced-dark');
      await context.close();
    }
    expect(colours.light!.background).not.toBe(colours.dark!.background);
    expect(colours.light!.text).not.toBe(colours.dark!.text);
    for (const scheme of ['light', 'dark']) {
      expect(colours[`${scheme}/forced-light`]).toEqual(colours.light);
      expect(colours[`${scheme}/forced-dark`]).toEqual(colours.dark);
    }
  });

  it('shows a focus ring to keyboard users', async () => {
    const context = await chromium.newContext();
    const page = await context.newPage();
    await page.goto(website.url);
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => {
      const element = document.activeElement as HTMLElement;
      const style = getComputedStyle(element);
      return { className: element.className, outlineStyle: style.outlineStyle, outlineWidth: style.outlineWidth };
    });
    expect(focused).toEqual({ className: 'agentauth-button', outlineStyle: 'solid', outlineWidth: '3px' });
    await context.close();
  });

  it('fits a 320 px wide screen without sideways scrolling, and stays a 44 px target', async () => {
    const context = await chromium.newContext({ viewport: { width: 320, height: 640 } });
    const page = await context.newPage();
    await page.goto(website.url);
    const box = (await page.getByRole('link', { name: BUTTON_NAME }).boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(320);
    expect(box.height).toBeGreaterThanOrEqual(44);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
    await context.close();
  });
});

interface ButtonColours {
  background: string;
  text: string;
}

function buttonColours(page: Page, selector: string): Promise<ButtonColours> {
  return page
    .locator(selector)
    .first()
    .evaluate((element) => {
      const style = getComputedStyle(element);
      return { background: style.backgroundColor, text: style.color };
    });
}

/** WCAG 2 contrast ratio of two computed `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (colour: string) => {
    const [r, g, bl] = (colour.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((c) => {
      const v = Number(c) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}
