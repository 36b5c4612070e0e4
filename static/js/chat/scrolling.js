// Scrolling: the page follows a streaming answer only while the reader is at the
// bottom, and offers a way down when they are not.

import { byId, focusComposer } from "./page.js";

var NEAR_BOTTOM = 80; // px: closer than this to the end counts as "at the bottom"
var following = true; // the reader is at the bottom: new text keeps them there
var placed = 0; // scrollTop where this script last put the page

function scroller() { return byId("main"); }

function atBottom() {
  var main = scroller();
  return main.scrollHeight - main.scrollTop - main.clientHeight < NEAR_BOTTOM;
}

export function toBottom() {
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
export function watchScrolling() {
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
export function noticeReaderMovedUp() {
  if (following && byId("messages") && scroller().scrollTop < placed - 1 && !atBottom()) {
    following = false;
  }
}

// New content: keep the reader at the bottom if they were there, else offer a way down.
export function followNewContent(event) {
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
