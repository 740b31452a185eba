// The console's script (served from /assets, so the CSP needs no inline script): copy buttons,
// confirmation of destructive actions, and the passkey ceremonies through @simplewebauthn's
// browser module (SimpleWebAuthnBrowser, loaded before this file). Every form also works without
// it, except passkeys, which need JavaScript by nature.
(() => {
  'use strict';
  var notice = document.getElementById('notice');

  function announce(text, kind) {
    if (!notice) return;
    notice.textContent = text;
    notice.className = `notice ${kind || 'error'}`;
    notice.focus();
  }

  // Move focus to a result announced by the server, so keyboard and screen-reader users hear it.
  if (notice?.textContent.trim()) notice.focus();

  document.querySelectorAll('button.copy[data-copy]').forEach((button) => {
    button.addEventListener('click', () => {
      var source = document.getElementById(button.getAttribute('data-copy'));
      if (!source || !navigator.clipboard) return;
      navigator.clipboard.writeText(source.textContent.trim()).then(
        () => {
          button.textContent = 'Copied';
          announce('Copied to the clipboard.', 'success');
        },
        () => {
          announce('Copying failed; select the text and copy it yourself.');
        },
      );
    });
  });

  document.querySelectorAll('form[data-confirm]').forEach((form) => {
    form.addEventListener('submit', (event) => {
      if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
    });
  });

  function post(url, csrf, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify(body || {}),
    }).then((response) =>
      response.json().then((data) => {
        // Adding a passkey needs a recent proof of who is at the keyboard: confirm, then come back.
        if (data.error === 'insufficient_user_authentication') {
          window.location.assign('/console/account/confirm?next=%2Fconsole%2Faccount');
          return new Promise(() => {});
        }
        if (!response.ok) throw new Error(data.error_description || 'The request failed.');
        return data;
      }),
    );
  }

  function failed(error) {
    // The person closed the browser's dialog or it timed out: not worth an alarm.
    if (error && error.name === 'NotAllowedError') return announce('The passkey request was cancelled or timed out.');
    announce(error?.message ? error.message : 'The passkey did not work.');
  }

  var webauthn = window.SimpleWebAuthnBrowser;
  var supported = webauthn?.browserSupportsWebAuthn();

  // A button that proves who you are with a passkey (sign in, or confirm it is you): ask the
  // server for a challenge, let the authenticator answer it, post the answer, follow the redirect.
  function passkeyAssertion(button, optionsUrl, answerUrl) {
    if (!button) return;
    if (!supported) {
      button.disabled = true;
      var unsupported = document.getElementById('passkey-unsupported');
      if (unsupported) unsupported.hidden = false;
    }
    button.addEventListener('click', () => {
      var csrf = button.getAttribute('data-csrf');
      button.disabled = true;
      post(optionsUrl, csrf)
        .then((started) =>
          webauthn.startAuthentication({ optionsJSON: started.options }).then((response) =>
            post(answerUrl, csrf, {
              challengeId: started.challengeId,
              response: response,
              next: button.getAttribute('data-next'),
            }),
          ),
        )
        .then((done) => {
          window.location.assign(done.redirect);
        })
        .catch(failed)
        .then(() => {
          button.disabled = false;
        });
    });
  }
  passkeyAssertion(
    document.getElementById('passkey-sign-in'),
    '/console/sign-in/passkey/options',
    '/console/sign-in/passkey',
  );
  passkeyAssertion(
    document.getElementById('passkey-confirm'),
    '/console/account/confirm/passkey/options',
    '/console/account/confirm/passkey',
  );

  var register = document.getElementById('passkey-register');
  if (register) {
    if (!supported) register.disabled = true;
    register.addEventListener('click', () => {
      var csrf = register.getAttribute('data-csrf');
      var name = document.getElementById('passkey-name');
      register.disabled = true;
      post('/console/account/passkeys/options', csrf)
        .then((started) =>
          webauthn.startRegistration({ optionsJSON: started.options }).then((response) =>
            post('/console/account/passkeys', csrf, {
              challengeId: started.challengeId,
              response: response,
              name: name ? name.value : '',
            }),
          ),
        )
        .then((done) => {
          window.location.assign(done.redirect);
        })
        .catch(failed)
        .then(() => {
          register.disabled = false;
        });
    });
  }
})();
