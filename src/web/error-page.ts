/** The 400 HTML error page of GET /authorize (docs/contract.md): shows error and error_description. */
import { html } from './html.ts';
import { layout } from './layout.ts';

export function errorPage(error: string, description: string): string {
  return layout(
    'Authorization failed — agentauth',
    html`<meta name="error" content="${error}">
<meta name="error-description" content="${description}">`,
    html`<h1>Authorization failed</h1>
<p class="error-description" id="error-description">${description}</p>
<p class="error-code">Error code: <code id="error">${error}</code></p>
<p>Return to the application you came from and start again.</p>`,
  );
}
