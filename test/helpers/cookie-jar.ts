/**
 * A browser's cookies for fetch-driven suites that visit a website and agentauth in turn. Like a
 * browser, it keys cookies by host name only: two servers on 127.0.0.1 with different ports see
 * each other's cookies, as they would in Chromium.
 */
export class CookieJar {
  readonly #byHost = new Map<string, Map<string, string>>();

  /** Keeps the Set-Cookie headers of a response to `url` (Max-Age=0 deletes). */
  keep(url: string | URL, response: Response): void {
    const host = new URL(url).hostname;
    const cookies = this.#byHost.get(host) ?? new Map<string, string>();
    this.#byHost.set(host, cookies);
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) cookies.delete(name);
      else cookies.set(name, pair.slice(at + 1).trim());
    }
  }

  /** The Cookie header a browser would send to `url`. */
  header(url: string | URL): string {
    return [...(this.#byHost.get(new URL(url).hostname) ?? [])].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  get(url: string | URL, name: string): string | undefined {
    return this.#byHost.get(new URL(url).hostname)?.get(name);
  }

  /** fetch with this jar's cookies, keeping what the answer sets; redirects are not followed. */
  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.keep(url, response);
    return response;
  }

  /** fetch, following redirects (303/302 as GET) the way a browser would, up to `limit` hops. */
  async follow(url: string | URL, init: RequestInit = {}, limit = 10): Promise<{ response: Response; url: URL }> {
    let current = new URL(url);
    let response = await this.fetch(current, init);
    for (let hop = 0; hop < limit && response.status >= 300 && response.status < 400; hop++) {
      current = new URL(response.headers.get('location')!, current);
      response = await this.fetch(current);
    }
    return { response, url: current };
  }
}
