// The chat page: Enter sends, Esc stops, the page follows a streaming answer only
// while the reader is at the bottom, and every (re)connect of the WebSocket tells
// the server which run this page shows and the last event it has, so the server
// replays exactly what is missing.
//
// Each concern is a module of a few named functions (static/js/chat/); the listeners
// here, one per event, call the ones that event needs.
import { watchClock } from "./chat/clock.js";
import {
  afterApproval, afterComposerOrRunButton, keepDraft, restoreDraft, sendOnEnter,
  showComposerState, stopOnEscape, suggestOnClick,
} from "./chat/composer.js";
import { addCopyButtons, copyOnClick } from "./chat/copying.js";
import {
  editFormKey, oneSectionPerRun, redrawStaleHistory, retireOlderActions,
  skipWhatTheSocketOvertook, versionsAndEditingOnClick,
} from "./chat/history.js";
import { dropLostNotice, refreshTotalsSoon } from "./chat/runs.js";
import { followNewContent, noticeReaderMovedUp, watchScrolling } from "./chat/scrolling.js";
import { showErrorFrame, syncOnOpen } from "./chat/socket.js";

// A module runs once the page is parsed, in turn with the deferred scripts (htmx
// first), and before DOMContentLoaded.
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
