// The authorization page's script (served from /assets, so the CSP needs no inline script).
// It listens to the request's status (Server-Sent Events; polling every second where push
// fails) and, once the agent has authenticated, submits the continue form. Without JavaScript
// the "Continue" button does the same.
(() => {
  'use strict';
  var meta = document.querySelector('meta[name="request-id"]');
  var form = document.getElementById('continue-form');
  var approve = document.getElementById('approve');
  var status = document.getElementById('status');
  var signedIn = document.getElementById('signed-in-agent');
  if (!meta || !form || !approve || !status) return;
  var requestId = meta.getAttribute('content');
  // Agents written for the original service read the id here (browser-use evaluates it over CDP).
  window.authRequest = Object.freeze({ request_id: requestId });
  var query = `?request_id=${encodeURIComponent(requestId)}`;
  var url = `/api/check-status${query}`;
  var done = false;
  form.addEventListener('submit', () => {
    done = true;
  });

  function show(text) {
    status.textContent = text;
  }

  function submit() {
    if (form.requestSubmit) form.requestSubmit(approve);
    else approve.click();
  }

  // Before the browser goes on, say which agent signed in (only this browser may ask), so a
  // person whose request id reached someone else's agent sees it. Continue either way: the
  // server decides what the browser receives.
  function showAgentThenContinue() {
    fetch(`/authorize/agent?request_id=${encodeURIComponent(meta.getAttribute('content'))}`, {
      cache: 'no-store',
      credentials: 'same-origin',
    })
      .then((res) => (res.ok ? res.json() : {}))
      .then((body) => {
        var agent = body.agent;
        var text = 'Your agent has authenticated. Continuing…';
        if (agent) {
          var owner = agent.owner_name ? `${agent.owner_name} <${agent.owner_email}>` : agent.owner_email;
          text = `Signed in by the agent ${agent.name}${owner ? ` of ${owner}` : ''} (${agent.model}). Continuing…`;
          if (signedIn) {
            signedIn.textContent = `Agent: ${agent.name} (${agent.agent_id})`;
            signedIn.hidden = false;
          }
        }
        show(text);
      })
      .catch(() => {
        show('Your agent has authenticated. Continuing…');
      })
      .then(submit);
  }

  /** Acts on a status; true once nothing more is to be waited for. */
  function handle(body) {
    if (done) return true;
    if (body.status === 'authenticated') {
      done = true;
      showAgentThenContinue();
    } else if (body.status === 'error') {
      done = true;
      show(body.error_description || 'The authorization request failed.');
      approve.disabled = true;
    } else if (body.status === 'completed') {
      done = true;
      show('This sign-in has already been completed.');
      approve.disabled = true;
    }
    return done;
  }

  function poll() {
    if (done) return;
    fetch(url, { cache: 'no-store', credentials: 'same-origin' })
      .then((res) => res.json())
      .then((body) => {
        if (!handle(body)) setTimeout(poll, 1000);
      })
      .catch(() => {
        setTimeout(poll, 2000);
      });
  }

  // Push: the server sends the status now and at every change. EventSource reconnects by itself
  // after a dropped stream (a node restarting); where the stream cannot be had, the page polls.
  function listen() {
    if (!window.EventSource) return setTimeout(poll, 1000);
    var source = new EventSource(`/api/check-status/events${query}`);
    var failures = 0;
    var opened = false;
    source.onopen = () => {
      opened = true;
    };
    source.addEventListener('status', (event) => {
      failures = 0;
      var body;
      try {
        body = JSON.parse(event.data);
      } catch (_e) {
        return;
      }
      if (handle(body)) source.close();
    });
    source.onerror = () => {
      if (done) return source.close();
      failures += 1;
      // Never reached (blocked, not a stream): poll at once. Dropped after working: EventSource
      // reconnects, and only repeated failures turn to polling.
      if (!opened || source.readyState === EventSource.CLOSED || failures >= 3) {
        source.close();
        setTimeout(poll, 1000);
      }
    };
  }
  listen();
})();
