// The authorization page's script (served from /assets, so the CSP needs no inline script).
// It polls the request's status every second and, once the agent has authenticated, submits
// the continue form. Without JavaScript the "Continue" button does the same.
(function () {
  'use strict';
  var meta = document.querySelector('meta[name="request-id"]');
  var form = document.getElementById('continue-form');
  var approve = document.getElementById('approve');
  var status = document.getElementById('status');
  if (!meta || !form || !approve || !status) return;
  var url = '/api/check-status?request_id=' + encodeURIComponent(meta.getAttribute('content'));
  var done = false;
  form.addEventListener('submit', function () { done = true; });

  function show(text) { status.textContent = text; }

  function poll() {
    if (done) return;
    fetch(url, { cache: 'no-store', credentials: 'same-origin' })
      .then(function (res) { return res.json(); })
      .then(function (body) {
        if (done) return;
        if (body.status === 'authenticated') {
          done = true;
          show('Your agent has authenticated. Continuing…');
          if (form.requestSubmit) form.requestSubmit(approve); else approve.click();
          return;
        }
        if (body.status === 'error') {
          done = true;
          show(body.error_description || 'The authorization request failed.');
          approve.disabled = true;
          return;
        }
        if (body.status === 'completed') {
          done = true;
          show('This sign-in has already been completed.');
          approve.disabled = true;
          return;
        }
        setTimeout(poll, 1000);
      })
      .catch(function () { setTimeout(poll, 2000); });
  }
  setTimeout(poll, 1000);
})();
