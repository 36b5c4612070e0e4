// The composer and the run's buttons: Enter sends, Esc stops, Send is off while it
// cannot send (and says why), drafts are kept until sent.

import { showLatestBranch } from "./history.js";
import { byId, focusComposer } from "./page.js";
import { toBottom } from "./scrolling.js";

// Esc stops the run (sidebar.js and shortcuts.js keep the Esc that is theirs from
// reaching this, which listens in the bubbling phase after them).
export function stopOnEscape(event) {
  if (event.key !== "Escape") return;
  var stop = document.querySelector("#run-controls button.stop");
  if (stop) {
    event.preventDefault();
    stop.click();
  }
}

// Enter sends the composer's message; Shift+Enter is a new line. While the run works
// or waits for the user, Enter keeps the text and says why it was not sent.
export function sendOnEnter(event) {
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
export function showComposerState() {
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

export function keepDraft(event) {
  if (event.target.id !== "composer-input") return;
  showComposerState();
  try {
    if (event.target.value) localStorage.setItem(draftKey(), event.target.value);
    else localStorage.removeItem(draftKey());
  } catch (e) { /* storage off: nothing kept */ }
}

export function restoreDraft() {
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

export function afterComposerOrRunButton(event) {
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
export function afterApproval(event) {
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

// A suggested prompt on the start page: into the composer, to send or change.
export function suggestOnClick(event) {
  var chosen = event.target.closest && event.target.closest(".suggestion[data-prompt]");
  var input = byId("composer-input");
  if (!chosen || !input) return;
  input.value = chosen.dataset.prompt;
  input.dispatchEvent(new Event("input", { bubbles: true })); // the draft keeps it
  input.focus();
}
