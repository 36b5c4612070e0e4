// Keyboard shortcuts, listed in the help dialog that `?` and the top bar's "?" open:
//   ?              the help (when not typing)
//   Ctrl/⌘+Shift+O a new conversation (browsers let a page take it, unlike Ctrl+N)
//   /              the composer (when not typing); Shift+Esc: the composer from anywhere
// Esc (stop the run) is chat.js's; Esc while the help or a menu is open closes only that;
// any other Esc in a text field leaves it, so that ? and / work again: on a chat page the
// composer has the focus from the start.
(function () {
  "use strict";

  var opener = null; // what had focus before the help opened: it gets it back after

  function byId(id) { return document.getElementById(id); }

  function typing(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  function openHelp() {
    var help = byId("shortcuts-help");
    if (!help || help.open) return;
    opener = document.activeElement;
    help.showModal();
  }

  function focusComposer() {
    var input = byId("composer-input");
    if (!input) return false;
    input.focus();
    return true;
  }

  function somethingOpen() {
    if (document.querySelector("dialog[open]")) return true;
    try { return !!document.querySelector(":popover-open"); } catch (e) { return false; }
  }

  // Captured on window, ahead of chat.js's listener on document: Shift+Esc and the Esc
  // that closes a dialog or menu must not also stop the run.
  window.addEventListener("keydown", function (event) {
    if (event.key !== "Escape") return;
    if (somethingOpen()) {
      event.stopPropagation(); // the browser still closes it
    } else if (event.shiftKey && focusComposer()) {
      event.stopPropagation();
      event.preventDefault();
    }
  }, true);

  // Bubbling on window, after everything on the document: an Esc that stopped a run,
  // cancelled an edit or closed a menu was taken (default prevented, or propagation
  // stopped) before it comes here.
  window.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || event.defaultPrevented || event.shiftKey || event.isComposing) return;
    if (typing(event.target) && event.target.isConnected) event.target.blur();
  });

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.isComposing) return;
    var command = event.ctrlKey || event.metaKey;
    if (command && event.shiftKey && event.code === "KeyO") {
      event.preventDefault();
      var help = byId("shortcuts-help");
      window.location.assign(help ? help.dataset.newConversation : "/");
      return;
    }
    if (command || typing(event.target) || somethingOpen()) return;
    if (event.key === "?") {
      event.preventDefault();
      openHelp();
    } else if (event.key === "/" && focusComposer()) {
      event.preventDefault();
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    var help = byId("shortcuts-help");
    if (!help) return;
    if (/Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent)) {
      help.querySelectorAll(".modifier-key").forEach(function (key) { key.textContent = "⌘"; });
    }
    help.addEventListener("close", function () {
      // The close event comes a moment after the dialog closed: a key pressed meanwhile
      // (/ to the composer) may have moved the focus on, and keeps it.
      var active = document.activeElement;
      var unclaimed = !active || active === document.body || help.contains(active);
      if (unclaimed && opener && opener.isConnected && opener !== document.body) opener.focus();
      opener = null;
    });
    var button = byId("shortcuts-button");
    if (button) button.addEventListener("click", openHelp);
  });
})();
