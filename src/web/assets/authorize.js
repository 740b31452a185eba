// The authorization page's script (served from /assets, so the CSP needs no inline script).
// It offers Copy (and Share where the device has it) for the handover sentence, counts down the
// time left, listens to the request's status (Server-Sent Events; polling every second where
// push fails) and, once the agent has authenticated, shows who signed in and submits the
// continue form. Without JavaScript the page still works: the sentence can be selected, and
// "Continue" and "Cancel" post the same form.
(() => {
  'use strict';
  var meta = document.querySelector('meta[name="request-id"]');
  var form = document.getElementById('continue-form');
  var approve = document.getElementById('approve');
  var cancel = document.getElementById('cancel');
  var status = document.getElementById('status');
  var progress = document.getElementById('progress');
  var signedIn = document.getElementById('signed-in-agent');
  var timeLeft = document.getElementById('time-left');
  if (!meta || !form || !approve || !status) return;
  var requestId = meta.getAttribute('content');
  // Agents written for the original service read the id here (browser-use evaluates it over CDP).
  window.authRequest = Object.freeze({ request_id: requestId });
  var query = `?request_id=${encodeURIComponent(requestId)}`;
  var url = `/api/check-status${query}`;
  var clientName = document.querySelector('meta[name="client-name"]')?.getAttribute('content') || 'the website';
  // How long the person sees who signed in before the browser goes on: long enough to read it.
  var SHOW_SUCCESS_MS = 1500;
  var EXPIRED_TEXT = `This request expired before your agent signed in. Nothing was shared; go back to ${clientName} to start again.`;
  var done = false;
  var submitted = false;
  form.addEventListener('submit', (event) => {
    // One submission: a second click while the first is on its way would only meet "already used".
    if (submitted) {
      event.preventDefault();
      return;
    }
    submitted = true;
    done = true;
  });

  function show(text) {
    status.textContent = text;
  }

  function setState(state) {
    if (progress) progress.setAttribute('data-state', state);
  }

  // ---- Handover: Copy and Share --------------------------------------------------------------
  var sentence = document.getElementById('handover-sentence');
  var handover = document.querySelector('.handover');
  var shared = document.getElementById('what-is-shared');
  var actions = document.getElementById('copy-actions');
  var feedback = document.getElementById('copy-feedback');
  var share = document.getElementById('share');
  var sentenceText = sentence?.getAttribute('data-sentence') || requestId;

  function copy(text, what) {
    var ok = () => {
      if (feedback) feedback.textContent = `Copied the ${what}. Now paste it into your agent's chat.`;
    };
    var fail = () => {
      // Without clipboard access the text is selected, for the person to copy themselves.
      var range = document.createRange();
      range.selectNodeContents(what === 'request ID' ? document.getElementById('request-id') : sentence);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      if (feedback)
        feedback.textContent = 'Copying is not allowed here; the text is selected, copy it with your keyboard.';
    };
    if (navigator.clipboard?.writeText) navigator.clipboard.writeText(text).then(ok, fail);
    else fail();
  }

  if (actions && sentence) {
    actions.hidden = false;
    document.getElementById('copy-sentence')?.addEventListener('click', () => copy(sentenceText, 'sentence'));
    document.getElementById('copy-id')?.addEventListener('click', () => copy(requestId, 'request ID'));
    // Share hands the sentence to another app (a message to oneself, the agent's app) in one step.
    if (share && navigator.share) {
      share.hidden = false;
      share.addEventListener('click', () => {
        navigator.share({ text: sentenceText }).catch(() => {});
      });
    }
  }

  // ---- Continue only when it can succeed --------------------------------------------------------
  // With script the page submits by itself once the agent is in, so a Continue that can only
  // fail ("not authenticated yet") is hidden until then.
  approve.hidden = true;

  // ---- Time left ------------------------------------------------------------------------------
  var expiresIn = Number(timeLeft?.getAttribute('data-expires-in'));
  var deadline = Number.isFinite(expiresIn) ? Date.now() + expiresIn * 1000 : null;
  var ticker = null;

  function clock(seconds) {
    var m = Math.floor(seconds / 60);
    var s = seconds % 60;
    return `${m}:${s < 10 ? '0' : ''}${s}`;
  }

  function tick() {
    if (!timeLeft || deadline === null) return;
    if (done) return stopClock();
    var seconds = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    timeLeft.textContent = `Time left: ${clock(seconds)}`;
    if (seconds === 0) ended(EXPIRED_TEXT, 'expired');
  }

  function stopClock() {
    if (ticker !== null) clearInterval(ticker);
    ticker = null;
  }

  if (deadline !== null) {
    tick();
    ticker = setInterval(tick, 1000);
  }

  // ---- Outcomes -------------------------------------------------------------------------------

  /** The request has ended (expired, cancelled, contested): say so, and offer only the way back. */
  function ended(text, state) {
    if (done) return;
    done = true;
    stopClock();
    setState(state || 'ended');
    show(text);
    if (timeLeft) timeLeft.hidden = true;
    approve.hidden = true;
    if (cancel) {
      // Cancel now only goes back: the server sends the browser to the website with the error.
      cancel.textContent = cancel.getAttribute('data-back-label') || 'Back to the website';
      cancel.className = '';
    }
    // The request can no longer be handed over: only the outcome and the way back remain.
    if (handover) handover.hidden = true;
    // Nothing will be received any more: the list of what would have been shared would mislead.
    if (shared) shared.hidden = true;
    document.title = `Sign-in request ended — ${clientName}`;
  }

  function submit() {
    if (submitted) return;
    if (form.requestSubmit) form.requestSubmit(approve);
    else approve.click();
  }

  /** The agent is in: show who, unmistakably, offer Continue, and go on by itself shortly after. */
  function signedInThenContinue() {
    stopClock();
    setState('signed-in');
    show('Your agent has signed in. Taking you back…');
    if (timeLeft) timeLeft.hidden = true;
    if (handover) handover.hidden = true;
    approve.textContent = `Continue to ${clientName}`;
    approve.hidden = false;
    if (cancel) cancel.hidden = true;
    document.title = `Signed in — continuing to ${clientName}`;
    // Before the browser goes on, say which agent signed in (only this browser may ask), so a
    // person whose request id reached someone else's agent sees it. Continue either way: the
    // server decides what the browser receives.
    fetch(`/authorize/agent${query}`, { cache: 'no-store', credentials: 'same-origin' })
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
      .then(() => {
        setTimeout(submit, SHOW_SUCCESS_MS);
      });
  }

  var askedOwner = false;
  /**
   * The agent's owner is asked to approve (docs/design.md §16): say so at once, then whose
   * approval it is (only this browser may ask; the owner's name, never an email). The same
   * words as the page without script (waitingForOwnerText).
   */
  function waitingForOwner() {
    if (askedOwner) return;
    askedOwner = true;
    setState('approval');
    // The request is held for this agent: handing it to another would only meet a refusal.
    if (handover) handover.hidden = true;
    var tail = ` Your agent asked its owner to allow signing in to ${clientName}; this page continues as soon as they approve.`;
    show(`Waiting for the agent's owner to approve.${tail}`);
    fetch(`/authorize/agent${query}`, { cache: 'no-store', credentials: 'same-origin' })
      .then((res) => (res.ok ? res.json() : {}))
      .then((body) => {
        var approval = body.approval;
        if (done || !approval) return;
        var whom = approval.owner_name || `the owner of ${approval.agent_name}`;
        show(`Waiting for approval from ${whom}.${tail}`);
      })
      .catch(() => {});
  }

  /** Acts on a status; true once nothing more is to be waited for. */
  function handle(body) {
    if (done) return true;
    if (body.status === 'pending' && body.approval_pending === true) {
      waitingForOwner();
    } else if (body.status === 'authenticated') {
      done = true;
      signedInThenContinue();
    } else if (body.status === 'error') {
      if (body.error === 'request_expired') ended(EXPIRED_TEXT, 'expired');
      // No code was issued: say so, whoever ended it (the owner's denial, a cancel elsewhere).
      else
        ended(
          `${body.error_description || 'The authorization request failed.'} Nothing was shared with ${clientName}.`,
          'ended',
        );
    } else if (body.status === 'completed') {
      ended('This sign-in has already been completed.', 'ended');
      if (cancel) cancel.hidden = true;
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
