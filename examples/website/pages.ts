/**
 * The example website's HTML: a home page that shows the drop-in button or who is signed in, and
 * an error page. No script at all, and nothing loaded from elsewhere.
 */
import { readFileSync } from 'node:fs';
import type { Session } from './sessions.ts';

const BUTTON_DIR = new URL('./button/', import.meta.url);

/** The drop-in button exactly as a site would paste it (its leading usage comment left out). */
const BUTTON_HTML = readFileSync(new URL('agentauth-button.html', BUTTON_DIR), 'utf8')
  .replace(/^<!--[\s\S]*?-->\s*/, '')
  .trim();
export const BUTTON_CSS = readFileSync(new URL('agentauth-button.css', BUTTON_DIR), 'utf8');

/** The site's own few styles; the button brings its own. */
export const SITE_CSS = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0 auto; padding: 2rem 1rem; max-width: 40rem; }
.site-actions { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; }
button.link { font: inherit; padding: 0.5em 1em; }
`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/site.css">
<link rel="stylesheet" href="/agentauth-button.css">
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export function homePage(session: Session): string {
  const user = session.user;
  if (user) {
    return layout(
      'Example website',
      `<h1>Example website</h1>
<p id="signed-in">Signed in as ${escapeHtml(user.name)} (${escapeHtml(user.email)})</p>
<p>Your agent's id, the <code>sub</code> of the ID token: <code id="subject">${escapeHtml(user.sub)}</code></p>
<form method="post" action="/logout"><button type="submit" class="link">Sign out</button></form>`,
    );
  }
  return layout(
    'Example website',
    `<h1>Example website</h1>
<p>Sign in without a password: your AI agent proves who you are.</p>
<div class="site-actions">
${BUTTON_HTML}
</div>`,
  );
}

export function errorPage(message: string): string {
  return layout(
    'Sign-in failed',
    `<h1>Sign-in failed</h1>
<p id="error">${escapeHtml(message)}</p>
<p><a href="/">Back to the home page</a></p>`,
  );
}
