/** The console's error page: what went wrong, in the documented shape, and a way back. */
import { html } from '../../web/html.ts';
import { layout } from '../../web/layout.ts';

const TITLES: Record<number, string> = {
  401: 'Sign-in failed',
  403: 'Not allowed',
  404: 'Not found',
  429: 'Too many attempts',
};

export function consoleErrorPage(error: string, description: string, status: number): string {
  const title = TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'That did not work');
  return layout(
    `${title} · agentauth console`,
    html`<meta name="error" content="${error}">
<meta name="error-description" content="${description}">`,
    html`<h1>${title}</h1>
<p class="error-description" id="error-description" role="alert">${description}</p>
<p class="error-code">Error code: <code id="error">${error}</code></p>
<p><a href="/console">Back to the console</a></p>`,
    { bodyClass: 'console' },
  );
}
