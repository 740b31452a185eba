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

  // An approval's decision with a passkey (docs/design.md §16): the button pressed names the
  // decision, the server makes a challenge for this approval and that decision, the
  // authenticator answers it (user verification), and the answer decides. A typed password
  // instead posts the form as it is, which also works without JavaScript.
  var decide = document.getElementById('decide-form');
  if (decide && decide.getAttribute('data-passkey') === 'yes') {
    var unsupportedNote = document.getElementById('passkey-unsupported');
    if (!supported && unsupportedNote) unsupportedNote.hidden = false;
    decide.addEventListener('submit', (event) => {
      var password = decide.querySelector('input[name="password"]');
      if ((password && password.value !== '') || !supported) return;
      event.preventDefault();
      var decision = event.submitter ? event.submitter.value : 'once';
      var base = `/console/approvals/${encodeURIComponent(decide.getAttribute('data-approval'))}`;
      var csrf = decide.getAttribute('data-csrf');
      var buttons = decide.querySelectorAll('button');
      buttons.forEach((button) => {
        button.disabled = true;
      });
      post(`${base}/passkey/options`, csrf, { decision: decision })
        .then((started) =>
          webauthn.startAuthentication({ optionsJSON: started.options }).then((response) =>
            post(`${base}/decide/passkey`, csrf, {
              challengeId: started.challengeId,
              response: response,
              decision: decision,
            }),
          ),
        )
        .then((done) => {
          window.location.assign(done.redirect);
        })
        .catch(failed)
        .then(() => {
          buttons.forEach((button) => {
            button.disabled = false;
          });
        });
    });
  }

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

  // Time left on waiting approvals, kept current between updates.
  function tick() {
    var now = Date.now() / 1000;
    document.querySelectorAll('[data-expires-at]').forEach((element) => {
      var seconds = Number(element.getAttribute('data-expires-at')) - now;
      var minutes = Math.floor(seconds / 60);
      element.textContent =
        seconds <= 0
          ? 'expired'
          : seconds < 60
            ? 'less than a minute left'
            : `${minutes} ${minutes === 1 ? 'minute' : 'minutes'} left`;
    });
  }
  // Also on a page that had none at first: the live parts may bring some.
  if (document.getElementById('approvals-badge')) setInterval(tick, 15000);

  // Approvals live (docs/design.md §16): the navigation's badge, and the parts of the page marked
  // data-live-approvals, follow GET /console/approvals/events; when the stream is refused or
  // fails for good, the page asks again every 30 seconds instead.
  var badge = document.getElementById('approvals-badge');
  if (!badge) return;
  var version = badge.getAttribute('data-version');

  function showCount(count) {
    var shown = document.getElementById('approvals-count');
    if (shown) shown.textContent = count > 99 ? '99+' : String(count);
    badge.hidden = count === 0;
  }

  // Replaces each live part with the same part of its page read again; a part with a
  // data-live-key (an approval's state) only when the key changed, so that a password being
  // typed is not wiped by an unrelated change.
  function refreshParts() {
    var parts = Array.prototype.slice.call(document.querySelectorAll('[data-live-approvals][data-live-url]'));
    var urls = {};
    parts.forEach((part) => {
      urls[part.getAttribute('data-live-url')] = true;
    });
    return Promise.all(
      Object.keys(urls).map((url) =>
        fetch(url, { credentials: 'same-origin', headers: { accept: 'text/html' } })
          .then((response) => (response.ok && !response.redirected ? response.text() : null))
          .then((text) => {
            if (text === null) return;
            var fresh = new DOMParser().parseFromString(text, 'text/html');
            parts.forEach((part) => {
              if (part.getAttribute('data-live-url') !== url) return;
              var replacement = fresh.getElementById(part.id);
              if (!replacement) return;
              var key = part.getAttribute('data-live-key');
              if (key !== null && key === replacement.getAttribute('data-live-key')) return;
              part.replaceWith(document.importNode(replacement, true));
            });
            var freshBadge = fresh.getElementById('approvals-count');
            if (freshBadge) showCount(Number.parseInt(freshBadge.textContent, 10) || 0);
          }),
      ),
    ).catch(() => {});
  }

  function changed(data) {
    showCount(data.pending);
    if (data.version === version) return;
    version = data.version;
    refreshParts();
  }

  var polling = null;
  function poll() {
    if (polling !== null) return;
    polling = setInterval(() => {
      fetch('/console/approvals', { credentials: 'same-origin', headers: { accept: 'text/html' } })
        .then((response) => (response.ok && !response.redirected ? response.text() : null))
        .then((text) => {
          if (text === null) return;
          var fresh = new DOMParser().parseFromString(text, 'text/html');
          var freshBadge = fresh.getElementById('approvals-badge');
          var count = fresh.getElementById('approvals-count');
          if (freshBadge && count)
            changed({
              pending: Number.parseInt(count.textContent, 10) || 0,
              version: freshBadge.getAttribute('data-version'),
            });
        })
        .catch(() => {});
    }, 30000);
  }

  if (!window.EventSource) {
    poll();
    return;
  }
  var stream = new EventSource('/console/approvals/events');
  stream.addEventListener('approvals', (event) => {
    try {
      changed(JSON.parse(event.data));
    } catch (_ignored) {
      // A malformed event changes nothing; the next one will.
    }
  });
  // EventSource reconnects by itself after a dropped stream; a refused one (429, 503, a session
  // that ended) is CLOSED for good, and the page polls instead.
  stream.addEventListener('error', () => {
    if (stream.readyState === EventSource.CLOSED) poll();
  });
})();
