/** The console's pages for people not yet signed in: sign-in, sign-up, one-time links. */
import { type Html, html } from '../../web/html.ts';
import { firstAdminCommand, MIN_PASSWORD_LENGTH } from '../../domain/accounts.ts';
import { consolePage, csrfField, field, type PageContext } from './shell.ts';

export interface FormState {
  values?: Record<string, string | undefined>;
  /** The field an InvalidField named, and its message. */
  errors?: Record<string, string>;
  /** A message for the whole form (a failed sign-in, a throttle). */
  message?: string | null;
}

const formNotice = (state: FormState) =>
  state.message
    ? { kind: 'error' as const, text: state.message }
    : state.errors && Object.keys(state.errors).length > 0
      ? { kind: 'error' as const, text: 'Please correct the field marked below.' }
      : null;

const passwordHint = `At least ${MIN_PASSWORD_LENGTH} characters. A few unrelated words make a strong password that is easy to remember.`;

/** On a server without any account: who makes the first one, and with which command. */
const firstAdmin = html`<section aria-labelledby="first-admin-heading" id="first-admin">
<h2 id="first-admin-heading">This server has no account yet</h2>
<p>Whoever runs the server makes the first administrator where it runs, with the server's environment, and opens the one-time setup link the command prints:</p>
<pre class="snippet"><code id="first-admin-command">${firstAdminCommand()}</code></pre>
<button type="button" class="secondary copy" data-copy="first-admin-command">Copy</button>
</section>
`;

export function signInPage(
  page: PageContext,
  state: FormState & { next?: string; signupOpen: boolean; noAccountYet?: boolean },
): string {
  const next = state.next ? html`<input type="hidden" name="next" value="${state.next}">` : '';
  return consolePage(page, {
    title: 'Sign in',
    notice: formNotice(state),
    body: html`${state.noAccountYet ? firstAdmin : ''}<section aria-labelledby="passkey-heading">
<h2 id="passkey-heading">With a passkey</h2>
<p>Use the passkey on this device or your phone. No email or password needed.</p>
<button type="button" id="passkey-sign-in" data-csrf="${page.csrf}" data-next="${state.next ?? ''}">Sign in with a passkey</button>
<p class="hint" id="passkey-unsupported" hidden>This browser cannot use passkeys; sign in with your password instead.</p>
</section>
<section aria-labelledby="password-heading">
<h2 id="password-heading">With a password</h2>
<form method="post" action="/console/sign-in" class="stack">
${csrfField(page.csrf)}${next}
${field({ label: 'Email', name: 'email', type: 'email', value: state.values?.email, autocomplete: 'username webauthn', required: true, error: state.errors?.email })}
${field({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, error: state.errors?.password })}
<button type="submit">Sign in</button>
</form>
</section>
${
  state.signupOpen
    ? html`<p>No account yet? <a href="/console/sign-up">Create one</a>.</p>`
    : state.noAccountYet
      ? ''
      : html`<p>No account yet? Ask someone who has one for an invitation.</p>`
}`,
  });
}

/** The sign-up form, by invitation (`action` carries the link) or open sign-up. */
export function signUpPage(
  page: PageContext,
  state: FormState & { action: string; invitedBy?: string | null },
): string {
  return consolePage(page, {
    title: 'Create your account',
    notice: formNotice(state),
    body: html`${state.invitedBy ? html`<p>${state.invitedBy} invited you to the agentauth console, where you manage your AI agents and your websites.</p>` : ''}
<form method="post" action="${state.action}" class="stack">
${csrfField(page.csrf)}
${field({ label: 'Email', name: 'email', type: 'email', value: state.values?.email, autocomplete: 'email', required: true, error: state.errors?.email, hint: 'Your agents sign websites in with this address.' })}
${field({ label: 'Name', name: 'name', value: state.values?.name, autocomplete: 'name', error: state.errors?.name, maxlength: 200, hint: 'Optional. Websites see it when your agent signs in.' })}
${field({ label: 'Password (optional)', name: 'password', type: 'password', autocomplete: 'new-password', error: state.errors?.password, hint: `${passwordHint} Leave it empty to use a passkey only: you add one on the next page.` })}
<button type="submit">Create account</button>
</form>`,
  });
}

/** A one-time link's landing page: a button, so that a mail scanner following the link uses nothing. */
export function linkPage(
  page: PageContext,
  input: { title: string; text: string | Html; action: string; button: string },
): string {
  return consolePage(page, {
    title: input.title,
    body: html`<p>${input.text}</p>
<form method="post" action="${input.action}">${csrfField(page.csrf)}<button type="submit">${input.button}</button></form>`,
  });
}

export function messagePage(
  page: PageContext,
  input: { title: string; text: string; link?: { href: string; label: string } },
): string {
  return consolePage(page, {
    title: input.title,
    notice: { kind: 'success', text: input.text },
    body: input.link ? html`<p><a href="${input.link.href}">${input.link.label}</a></p>` : html``,
  });
}
