// The chat page: Enter sends, and every (re)connect of the WebSocket tells the
// server which run this page shows and the last event it has, so the server
// replays exactly what is missing.
(function () {
  "use strict";

  function streamState() {
    var el = document.getElementById("stream-state");
    return el ? { run: el.dataset.run || "", seq: parseInt(el.dataset.seq || "0", 10) } : null;
  }

  document.addEventListener("htmx:wsOpen", function (event) {
    var state = streamState();
    if (state && state.run) {
      event.detail.socketWrapper.send(
        JSON.stringify({ type: "sync", run_id: state.run, last_seq: state.seq })
      );
    }
  });

  // htmx-ext-ws would try to swap JSON error frames: show them instead.
  document.addEventListener("htmx:wsBeforeMessage", function (event) {
    var text = event.detail.message;
    if (typeof text === "string" && text.charAt(0) === "{") {
      event.preventDefault();
      try { console.warn("Oracle:", JSON.parse(text).error); } catch (e) { /* not JSON */ }
    }
  });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target.id !== "composer-input" || event.key !== "Enter" || event.shiftKey || event.isComposing) {
      return;
    }
    event.preventDefault();
    if (target.value.trim()) {
      target.form.requestSubmit();
    }
  });

  // Keep the newest message in view while the answer streams.
  document.addEventListener("htmx:oobAfterSwap", function () {
    var messages = document.getElementById("messages");
    if (messages) {
      var main = document.getElementById("main");
      main.scrollTop = main.scrollHeight;
    }
  });
})();
