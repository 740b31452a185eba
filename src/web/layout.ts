/** The page shell and the security headers every HTML page carries (docs/design.md §4). */
import { type Html, html } from './html.ts';

export interface PageHeaders {
  [name: string]: string;
}

/**
 * Headers for an HTML page. `formTargets` are origins a form on the page may end up at:
 * Chromium applies form-action to the redirect that follows a form post, so the client's
 * redirect_uri origin must be listed for the continue form to work.
 */
export function pageHeaders(formTargets: string[] = []): PageHeaders {
  const formAction = ["'self'", ...formTargets].join(' ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    pragma: 'no-cache',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  };
}

export interface LayoutOptions {
  /** A class on <body> (the console's pages are wider). */
  bodyClass?: string;
  /** What comes before <main>: the console's navigation. */
  header?: Html;
}

/** A whole page: `head` adds to the shared head (scripts), `body` is the content of <main>. */
export function layout(title: string, head: Html, body: Html, options: LayoutOptions = {}): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${head}
<link rel="stylesheet" href="/assets/agentauth.css">
</head>
<body${options.bodyClass ? html` class="${options.bodyClass}"` : ''}>
${options.header}
<main>
${body}
</main>
</body>
</html>
`.value;
}
