// What the page says of the run beside its messages: the conversation's totals once it
// ends, the notice of a lost run once it goes on.

import { byId, streamState } from "./page.js";

var refreshing = null;

export function refreshTotalsSoon() {
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

// A run shown as lost goes on: its events moved past those saved when the page was drawn.
export function dropLostNotice() {
  var notice = byId("run-lost");
  var state = streamState();
  if (notice && state && state.seq > parseInt(notice.dataset.seq || "0", 10)) notice.remove();
}
