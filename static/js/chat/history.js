// The conversation's history: versions of a message and their branches, editing a
// message, and what the socket and the composer's replies add to it (one section per
// run, older runs' actions retired, a history reshaped elsewhere drawn again).

import { byId, streamState } from "./page.js";

export function versionsAndEditingOnClick(event) {
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
export function showLatestBranch() {
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
export function editFormKey(event) {
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
export function oneSectionPerRun(event) {
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
export function retireOlderActions(event) {
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
export function redrawStaleHistory(event) {
  var fragment = event.detail.fragment;
  var first = fragment && fragment.firstElementChild;
  if (!first || first.id !== "history-stale") return;
  event.detail.shouldSwap = false;
  if (!byId("run-" + first.dataset.run)) window.location.reload();
}

// The reply's Stop and typing indicator, older than what the socket said of the run
// it started, are left out.
export function skipWhatTheSocketOvertook(event) {
  var fragment = event.detail.fragment;
  var first = fragment && fragment.firstElementChild;
  var posted = first && first.getAttribute("data-posted-run");
  var state = streamState();
  if (posted && state && state.run === posted) event.detail.shouldSwap = false;
}
