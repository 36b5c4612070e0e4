// Copy beside a link in the admin (an invite's sign-up link): the link to the clipboard,
// and the button says so. Where the page may not write the clipboard (plain http from
// another machine is no secure context), the link is selected instead, for Ctrl+C.
(function () {
  "use strict";

  function say(button, text) {
    button.textContent = text;
    setTimeout(function () { button.textContent = "Copy"; }, 2000);
  }

  function select(button) {
    var shown = button.parentNode.querySelector("code");
    var range = document.createRange();
    range.selectNodeContents(shown);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    say(button, "Selected: press Ctrl+C");
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button[data-copy]");
    if (!button) return;
    if (!navigator.clipboard || !window.isSecureContext) {
      select(button);
      return;
    }
    navigator.clipboard.writeText(button.dataset.copy).then(
      function () { say(button, "Copied"); },
      function () { select(button); }
    );
  });
})();
