// What every part of the chat page reads: elements by id, the run the page shows
// (its id and the last event it has) and the composer.

export function byId(id) { return document.getElementById(id); }

export function streamState() {
  var el = byId("stream-state");
  return el ? { run: el.dataset.run || "", seq: parseInt(el.dataset.seq || "0", 10) } : null;
}

export function focusComposer() {
  var input = byId("composer-input");
  if (input) input.focus({ preventScroll: true });
}
