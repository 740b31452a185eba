// The authorization page's script (served from /assets, so the CSP needs no inline script).
// It polls the request's status every second and, once the agent has authenticated, submits
// the continue form. Without JavaScript the "Continue" button does the same.
(function () {
  'use strict';
  var meta = document.querySelector('meta[name="request-id"]');
  var form = document.getElementById('continue-form');
  var approve = document.getElementById('approve');
  var status = document.getElementById('status');
  var signedIn = document.getElementById('signed-in-agent');
  if (!meta || !form || !approve || !status) return;
  var url = '/api/check-status?request_id=' + encodeURIComponent(meta.getAttribute('content'));
  var done = false;
  form.addEventListener('submit', function () { done = true; });

  function show(text) { status.textContent = text; }

  function submit() {
    if (form.requestSubmit) form.requestSubmit(approve); else approve.click();
  }

  // Before the browser goes on, say which agent signed in (only this browser may ask), so a
  // person whose request id reached someone else's agent sees it. Continue either way: the
  // server decides what the browser receives.
  function showAgentThenContinue() {
    fetch('/authorize/agent?request_id=' + encodeURIComponent(meta.getAttribute('content')), { cache: 'no-store', credentials: 'same-origin' })
      .then(function (res) { return res.ok ? res.json() : {}; })
      .then(function (body) {
        var agent = body.agent;
        var text = 'Your agent has authenticated. Continuing…';
        if (agent) {
          var owner = agent.owner_name ? agent.owner_name + ' <' + agent.owner_email + '>' : agent.owner_email;
          text = 'Signed in by the agent ' + agent.name + (owner ? ' of ' + owner : '') + ' (' + agent.model + '). Continuing…';
          if (signedIn) { signedIn.textContent = 'Agent: ' + agent.name + ' (' + agent.agent_id + ')'; signedIn.hidden = false; }
        }
        show(text);
      })
      .catch(function () { show('Your agent has authenticated. Continuing…'); })
      .then(submit);
  }

  function poll() {
    if (done) return;
    fetch(url, { cache: 'no-store', credentials: 'same-origin' })
      .then(function (res) { return res.json(); })
      .then(function (body) {
        if (done) return;
        if (body.status === 'authenticated') {
          done = true;
          showAgentThenContinue();
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
