// The chat page: Enter sends, Esc stops, the page follows a streaming answer only
// while the reader is at the bottom, and every (re)connect of the WebSocket tells
// the server which run this page shows and the last event it has, so the server
// replays exactly what is missing.
//
// Each concern is a few named functions; the listeners at the end, one per event,
// call the ones that event needs.
(function () {
  "use strict";

  var NEAR_BOTTOM = 80; // px: closer than this to the end counts as "at the bottom"
  var following = true; // the reader is at the bottom: new text keeps them there
  var placed = 0; // scrollTop where this script last put the page

  function byId(id) { return document.getElementById(id); }

  function streamState() {
    var el = byId("stream-state");
    return el ? { run: el.dataset.run || "", seq: parseInt(el.dataset.seq || "0", 10) } : null;
  }

  function focusComposer() {
    var input = byId("composer-input");
    if (input) input.focus({ preventScroll: true });
  }

  // --- scrolling --------------------------------------------------------------------
  function scroller() { return byId("main"); }

  function atBottom() {
    var main = scroller();
    return main.scrollHeight - main.scrollTop - main.clientHeight < NEAR_BOTTOM;
  }

  function toBottom() {
    var main = scroller();
    if (main) { main.scrollTop = main.scrollHeight; placed = main.scrollTop; }
    following = true;
    showJump(false);
  }

  function showJump(show) {
    var jump = byId("jump-to-latest");
    if (jump) jump.hidden = !show;
  }

  // A conversation opens at its latest message; from then on the page knows whether
  // the reader is at the bottom.
  function watchScrolling() {
    var main = scroller();
    if (!main || !byId("messages")) return;
    toBottom();
    focusComposer();
    main.addEventListener("scroll", function () {
      following = atBottom();
      if (following) showJump(false);
    }, { passive: true });
    var jump = byId("jump-to-latest");
    if (jump) jump.addEventListener("click", function () { toBottom(); focusComposer(); });
  }

  // A scroll event arrives a frame after the reader moves, so new text can land
  // between the two: if the page sits above where this script put it and is not
  // at the bottom, the reader has moved up, whether or not the event came yet.
  function noticeReaderMovedUp() {
    if (following && byId("messages") && scroller().scrollTop < placed - 1 && !atBottom()) {
      following = false;
    }
  }

  // New content: keep the reader at the bottom if they were there, else offer a way down.
  function followNewContent(event) {
    var target = event.detail.target;
    if (target && target.id === "title") { // swapped whole: read the new one
      document.title = (byId("title").value || "New conversation") + " · Oracle";
    }
    if (!byId("messages")) return;
    if (following) {
      scroller().scrollTop = scroller().scrollHeight;
      placed = scroller().scrollTop;
    } else if (!atBottom()) {
      showJump(true);
    }
  }

  // --- the clock -------------------------------------------------------------------
  // The server sends the time used at each checkpoint; between them (a long call
  // streaming) the seconds gauge counts on by itself while the run works. The timer
  // runs only while the page shows a running run's seconds gauge.
  var clock = null; // {key, base, at}: the seconds counted on since the server's figure
  var ticking = null; // the timer, while a run is live

  function liveSecondsGauge() {
    return document.querySelector("#gauges[data-status=running] .gauge[data-ticking]");
  }

  // Called whenever the gauges may have changed: starts the clock when a run's gauge
  // appears, stops it when the run ends or its gauges leave the page.
  function watchClock() {
    if (!liveSecondsGauge()) {
      stopClock();
    } else if (!ticking) {
      tick();
      ticking = setInterval(tick, 1000);
    }
  }

  // The clock outlives a reload of the tab (sessionStorage): the server's figure is
  // the last checkpoint's, which a long call streaming leaves behind.
  function keepClock(kept) {
    try { sessionStorage.setItem("oracle-clock", JSON.stringify(kept)); } catch (e) { /* off */ }
  }

  function keptClock(key) {
    try {
      var kept = JSON.parse(sessionStorage.getItem("oracle-clock") || "null");
      return kept && kept.key === key ? kept : null;
    } catch (e) { return null; }
  }

  function stopClock() {
    if (ticking) clearInterval(ticking);
    ticking = null;
    clock = null;
  }

  function tick() {
    var gauge = liveSecondsGauge();
    if (!gauge) { stopClock(); return; }
    var gauges = byId("gauges"), state = streamState();
    // a new round counts anew; the run's id keys what a reload of this tab picks up
    var key = (state ? state.run : "") + " " + gauges.dataset.status + " " + gauges.dataset.round;
    var sent = parseFloat(gauge.dataset.ticking), now = Date.now();
    if (!clock) clock = keptClock(key);
    if (!clock || clock.key !== key || sent > clock.base + (now - clock.at) / 1000) {
      clock = { key: key, base: sent, at: now };
    }
    var seconds = clock.base + (now - clock.at) / 1000;
    keepClock(clock);
    var meter = gauge.querySelector("meter");
    var limit = parseFloat(meter.dataset.limit || "0");
    gauge.querySelector(".gauge-figures").textContent =
      Math.floor(seconds) + " / " + gauge.dataset.limitShown;
    if (limit) meter.value = Math.min(100, Math.round(100 * seconds / limit));
  }

  // --- copying -----------------------------------------------------------------------
  function addCopyButtons(root) {
    root.querySelectorAll(".code-head:not([data-copy])").forEach(function (head) {
      head.dataset.copy = "1";
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy-code";
      button.textContent = "Copy";
      button.setAttribute("aria-label", "Copy code");
      head.appendChild(button);
    });
  }

  function copied(button, text) {
    navigator.clipboard.writeText(text).then(function () {
      var label = button.textContent;
      button.textContent = "Copied";
      setTimeout(function () { button.textContent = label; }, 1500);
    });
  }

  function copyOnClick(event) {
    var button = event.target.closest && event.target.closest(".copy-code, .copy-answer");
    if (!button) return;
    if (button.classList.contains("copy-code")) {
      copied(button, button.closest(".code-block").querySelector("pre").textContent);
    } else {
      // the Markdown the Oracle wrote; what is drawn, for an answer kept without it
      var answer = button.closest(".msg");
      var source = answer.querySelector(".answer-source");
      copied(button, source && source.value ? source.value : answer.querySelector(".msg-body").innerText.trim());
    }
  }

  // --- the conversation's totals -------------------------------------------------------
  var refreshing = null;

  function refreshTotalsSoon() {
    if (!refreshing) refreshing = setTimeout(refreshTotals, 0); // once the frame is in
  }

  // A run ended: the conversation's totals are asked for again (once per ending).
  function refreshTotals() {
    refreshing = null;
    var totals = byId("conversation-totals"), gauges = byId("gauges"), state = byId("stream-state");
    if (!totals || !gauges || !state || gauges.dataset.status !== "finished") return;
    var ending = state.dataset.run + ":" + state.dataset.seq;
    if (totals.dataset.shownFor === ending) return;
    htmx.ajax("GET", totals.dataset.url, { target: "#conversation-totals", swap: "outerHTML" })
      .then(function () { byId("conversation-totals").dataset.shownFor = ending; });
  }

  // --- versions and editing ----------------------------------------------------------
  function versionsAndEditingOnClick(event) {
    var target = event.target;
    var step = target.closest && target.closest(".version-prev, .version-next");
    if (step) {
      var version = step.closest(".version");
      var siblings = Array.prototype.filter.call(version.parentNode.children, function (el) {
        return el.classList.contains("version");
      });
      var next = siblings[siblings.indexOf(version) + (step.classList.contains("version-next") ? 1 : -1)];
      if (next) {
        version.hidden = true;
        next.hidden = false;
        markBranch(next, siblings);
        var same = next.querySelector(step.classList.contains("version-next") ? ".version-next" : ".version-prev");
        (same && !same.disabled ? same : next.querySelector(".version-switch button:not([disabled])") || next).focus();
      }
      return;
    }
    if (target.closest && target.closest(".edit-message")) {
      var message = target.closest(".msg-user");
      if (message.querySelector(".edit-form")) return;
      var form = byId("edit-template").content.firstElementChild.cloneNode(true);
      form.querySelector("[name=message]").value = message.dataset.message;
      var text = form.querySelector("textarea");
      text.value = message.querySelector(".edit-source").value;
      message.classList.add("editing");
      message.appendChild(form);
      htmx.process(form);
      text.focus();
      return;
    }
    if (target.closest && target.closest(".edit-cancel")) {
      var editing = target.closest(".msg-user");
      editing.classList.remove("editing");
      target.closest(".edit-form").remove();
      editing.querySelector(".edit-message").focus();
    }
  }

  // A message's version in view that is not its latest holds the rest of its branch;
  // the latest branch's turns, after it on the page, step aside meanwhile (CSS).
  function markBranch(version, siblings) {
    if (!version.querySelector(":scope > .msg-user")) return;  // an answer's version
    var latest = siblings[siblings.length - 1];
    version.parentNode.classList.toggle("branch-elsewhere", version !== latest);
  }

  // Back to the latest version of every message, where what is sent now goes.
  function showLatestBranch() {
    document.querySelectorAll("#messages .turn.branch-elsewhere").forEach(function (turn) {
      var versions = Array.prototype.filter.call(turn.children, function (el) {
        return el.classList.contains("version");
      });
      versions.forEach(function (el, i) { el.hidden = i !== versions.length - 1; });
      turn.classList.remove("branch-elsewhere");
    });
  }

  // A key in an edit form is the form's (Esc cancels it, Enter sends it), not the
  // page's: true when the key was one.
  function editFormKey(event) {
    var form = event.target.closest && event.target.closest(".edit-form");
    if (!form) return false;
    if (event.key === "Escape") {
      form.querySelector(".edit-cancel").click();
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
    return true;
  }

  // One section per run on the page. A run's section already there (the history, the
  // composer or the socket put it there) is not added again when the run's first event
  // arrives; and the reply to the composer's post, which can come after the socket
  // showed the run under load (the worker started it, the socket made its section,
  // streamed into it, maybe ended it), takes that section, with what it holds, in place
  // of its empty one: two sections of one id would each get every later event (the
  // answer twice).
  function oneSectionPerRun(event) {
    var fragment = event.detail.fragment;
    var first = fragment && fragment.firstElementChild;
    if (!first) return;
    if (first.matches("section.run[id]")) {
      if (byId(first.id)) event.detail.shouldSwap = false;
      return;
    }
    // A new turn (the socket's, for a question sent elsewhere, or the post's reply)
    // whose message is on the page already, from the other of the two.
    var asked = first.matches(".turn") && first.querySelector(":scope > .msg-user[id]");
    if (asked && byId(asked.id)) {
      event.detail.shouldSwap = false;
      return;
    }
    fragment.querySelectorAll(".turn > section.run[id]").forEach(function (empty) {
      var shown = byId(empty.id);
      if (shown) empty.replaceWith(shown);
    });
  }

  // A new turn: what older runs offered (Continue, Resume) is over, on every tab.
  function retireOlderActions(event) {
    var fragment = event.detail.fragment;
    var first = fragment && fragment.firstElementChild;
    if (!first || !event.detail.shouldSwap || !first.matches(".turn, section.run[id]")) return;
    document.querySelectorAll("#messages .system-actions").forEach(function (actions) {
      actions.replaceChildren();
    });
  }

  // A run that reshapes the history (another answer to a message, an edited message),
  // started elsewhere: the page is drawn again, versions and all, unless it shows that
  // run already. What is typed stays (the draft).
  function redrawStaleHistory(event) {
    var fragment = event.detail.fragment;
    var first = fragment && fragment.firstElementChild;
    if (!first || first.id !== "history-stale") return;
    event.detail.shouldSwap = false;
    if (!byId("run-" + first.dataset.run)) window.location.reload();
  }

  // The reply's Stop and typing indicator, older than what the socket said of the run
  // it started, are left out.
  function skipWhatTheSocketOvertook(event) {
    var fragment = event.detail.fragment;
    var first = fragment && fragment.firstElementChild;
    var posted = first && first.getAttribute("data-posted-run");
    var state = streamState();
    if (posted && state && state.run === posted) event.detail.shouldSwap = false;
  }

  // --- the composer and the run's buttons -------------------------------------------
  // Esc stops the run (sidebar.js and shortcuts.js keep the Esc that is theirs from
  // reaching this, which listens in the bubbling phase after them).
  function stopOnEscape(event) {
    if (event.key !== "Escape") return;
    var stop = document.querySelector("#run-controls button.stop");
    if (stop) {
      event.preventDefault();
      stop.click();
    }
  }

  // Enter sends the composer's message; Shift+Enter is a new line. While the run works
  // or waits for the user, Enter keeps the text and says why it was not sent.
  function sendOnEnter(event) {
    var target = event.target;
    if (target.id !== "composer-input" || event.key !== "Enter" || event.shiftKey || event.isComposing) {
      return;
    }
    event.preventDefault();
    if (composerBusy()) {
      var note = byId("composer-state");
      note.classList.remove("nudged");
      void note.offsetWidth; // the nudge plays again
      note.classList.add("nudged");
      return;
    }
    if (target.value.trim()) {
      target.form.requestSubmit();
    }
  }

  // What keeps a message from being sent now: the run working (its Stop is shown), or
  // paused for the user, at a limit or on a tool call to approve; "" when nothing does.
  // Until the socket has said how the run is, the page's own word holds.
  function runState() {
    if (document.querySelector("#run-controls .stop")) return "working";
    var note = byId("composer-state");
    var gauges = byId("gauges");
    var status = gauges && gauges.dataset.status;
    if (!status) return note ? note.dataset.initial : "";
    if (status !== "paused") return "";
    return document.querySelector("#messages .approval") ? "approval" : "paused";
  }

  function composerBusy() {
    var note = byId("composer-state");
    return !!(note && !note.hidden);
  }

  // A message longer than the server takes: said as the server says it, and kept whole
  // (a maxlength would cut a paste silently).
  function tooLong() {
    var input = byId("composer-input");
    var most = input ? parseInt(input.dataset.maxChars || "0", 10) : 0;
    if (!most || input.value.length <= most) return "";
    return "At most " + most.toLocaleString("en-US") + " characters (this one has " +
      input.value.length.toLocaleString("en-US") + ").";
  }

  // Send is off while the run works or waits, or the message is too long, and the
  // composer says why.
  function showComposerState() {
    var note = byId("composer-state");
    if (!note) return;
    var state = runState();
    var text = state ? note.dataset[state] : tooLong();
    var send = document.querySelector("#composer button[type=submit]");
    if (note.textContent !== text) {
      note.textContent = text;
      note.hidden = !text;
    }
    if (send) send.disabled = !!text;
  }

  // What is typed in a composer is kept (localStorage) until it is sent: a reload, a
  // closed tab or a refused message loses nothing.
  function draftKey() {
    var form = byId("composer");
    return form ? "oracle-draft:" + form.getAttribute("action") : "";
  }

  function keepDraft(event) {
    if (event.target.id !== "composer-input") return;
    showComposerState();
    try {
      if (event.target.value) localStorage.setItem(draftKey(), event.target.value);
      else localStorage.removeItem(draftKey());
    } catch (e) { /* storage off: nothing kept */ }
  }

  function restoreDraft() {
    var input = byId("composer-input");
    if (!input) return;
    try {
      var draft = localStorage.getItem(draftKey());
      if (draft && !input.value) input.value = draft;
      // the first page's draft, once its conversation shows it sent
      var first = localStorage.getItem("oracle-draft:" + (input.dataset.newAction || ""));
      var sent = document.querySelector("#messages .msg-user .edit-source");
      if (first && sent && sent.value === first) {
        localStorage.removeItem("oracle-draft:" + input.dataset.newAction);
      }
    } catch (e) { /* storage off */ }
  }

  function forgetDraft() {
    try { localStorage.removeItem(draftKey()); } catch (e) { /* storage off */ }
  }

  function afterComposerOrRunButton(event) {
    var elt = event.detail.elt;
    if (!event.detail.successful || !elt) return;
    if (elt.id === "composer") {
      var refused = byId("composer-error");
      if (refused && refused.textContent.trim()) return; // not sent: the text stays
      elt.reset(); // sent: the message is on the page now
      forgetDraft();
      showLatestBranch(); // where it went
      toBottom();
      focusComposer();
    } else if (elt.closest && elt.closest(".system-actions, #run-controls")) {
      focusComposer(); // the button pressed is gone: focus goes back to writing
    }
  }

  // Approve, Always allow or Deny of one waiting tool call: its row goes once the answer
  // is taken (the run goes on when every call has one); a refusal is shown in the row.
  function afterApproval(event) {
    var elt = event.detail.elt;
    if (!elt || !elt.hasAttribute || !elt.hasAttribute("data-approval")) return;
    var row = elt.closest(".approval");
    if (!row) return;
    if (event.detail.successful) {
      row.remove();
      return;
    }
    var said = "That answer was not taken.";
    try { said = JSON.parse(event.detail.xhr.responseText).error || said; } catch (e) { /* not JSON */ }
    row.querySelector(".approval-error").textContent = said;
  }

  // A run shown as lost goes on: its events moved past those saved when the page was drawn.
  function dropLostNotice() {
    var notice = byId("run-lost");
    var state = streamState();
    if (notice && state && state.seq > parseInt(notice.dataset.seq || "0", 10)) notice.remove();
  }

  // --- the socket -------------------------------------------------------------------
  function syncOnOpen(event) {
    var state = streamState();
    if (state && state.run) {
      event.detail.socketWrapper.send(
        JSON.stringify({ type: "sync", run_id: state.run, last_seq: state.seq })
      );
    }
  }

  // htmx-ext-ws would try to swap JSON error frames: show them instead.
  function showErrorFrame(event) {
    var text = event.detail.message;
    if (typeof text === "string" && text.charAt(0) === "{") {
      event.preventDefault();
      try { console.warn("Oracle:", JSON.parse(text).error); } catch (e) { /* not JSON */ }
    }
  }

  // --- one listener per event --------------------------------------------------------
  document.addEventListener("DOMContentLoaded", function () {
    watchScrolling();
    addCopyButtons(document);
    watchClock();
    restoreDraft();
    showComposerState();
  });

  document.addEventListener("input", keepDraft);

  document.addEventListener("htmx:oobBeforeSwap", function (event) {
    noticeReaderMovedUp();
    redrawStaleHistory(event);
    oneSectionPerRun(event);
    skipWhatTheSocketOvertook(event);
    retireOlderActions(event);
  });

  document.addEventListener("htmx:oobAfterSwap", function (event) {
    followNewContent(event);
    addCopyButtons(event.detail.target.parentNode || document);
    refreshTotalsSoon();
    watchClock();
    dropLostNotice();
    showComposerState();
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    afterComposerOrRunButton(event);
    afterApproval(event);
    showComposerState();
  });

  document.addEventListener("htmx:wsOpen", syncOnOpen);
  document.addEventListener("htmx:wsBeforeMessage", showErrorFrame);

  // A suggested prompt on the start page: into the composer, to send or change.
  function suggestOnClick(event) {
    var chosen = event.target.closest && event.target.closest(".suggestion[data-prompt]");
    var input = byId("composer-input");
    if (!chosen || !input) return;
    input.value = chosen.dataset.prompt;
    input.dispatchEvent(new Event("input", { bubbles: true })); // the draft keeps it
    input.focus();
  }

  document.addEventListener("click", function (event) {
    suggestOnClick(event);
    copyOnClick(event);
    versionsAndEditingOnClick(event);
  });

  document.addEventListener("keydown", function (event) {
    if (editFormKey(event)) return;
    stopOnEscape(event);
    sendOnEnter(event);
  });
})();
