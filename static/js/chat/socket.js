// The page's WebSocket: each (re)connect says which run this page shows and the last
// event it has, so the server replays exactly what is missing.

import { streamState } from "./page.js";

export function syncOnOpen(event) {
  var state = streamState();
  if (state && state.run) {
    event.detail.socketWrapper.send(
      JSON.stringify({ type: "sync", run_id: state.run, last_seq: state.seq })
    );
  }
}

// htmx-ext-ws would try to swap JSON error frames: show them instead.
export function showErrorFrame(event) {
  var text = event.detail.message;
  if (typeof text === "string" && text.charAt(0) === "{") {
    event.preventDefault();
    try { console.warn("Oracle:", JSON.parse(text).error); } catch (e) { /* not JSON */ }
  }
}
