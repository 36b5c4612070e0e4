// The new API token's Copy button (the settings page): puts the token on the clipboard and
// says "Copied" a moment (as the chat's Copy buttons do), or selects it where the clipboard
// is out of reach.
(function () {
  "use strict";

  function select(element) {
    window.getSelection().selectAllChildren(element);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest(".copy-token");
    if (!button) return;
    var token = document.getElementById(button.getAttribute("aria-controls"));
    if (!navigator.clipboard) return select(token); // not a secure context
    navigator.clipboard.writeText(token.textContent).then(
      function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = "Copy"; }, 1500);
      },
      function () { select(token); }
    );
  });
})();
