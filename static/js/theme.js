// The theme switch in the top bar: System → Light → Dark → System. The choice is kept
// in localStorage and read back by before_paint.js, in base.html's <head>, before the
// first paint; CSS does the rest from <html data-theme>, including the button's name.
(function () {
  "use strict";

  var KEY = "oracle-theme";
  var ORDER = ["system", "light", "dark"];

  function store(choice) {
    try {
      if (choice === "system") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, choice);
    } catch (e) { /* storage is off: the choice lasts until the page is left */ }
  }

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest && event.target.closest("#theme-toggle");
    if (!toggle) return;
    var root = document.documentElement;
    var next = ORDER[(ORDER.indexOf(root.dataset.theme) + 1) % ORDER.length];
    root.dataset.theme = next;
    store(next);
  });

  // A choice made in another tab applies here too.
  window.addEventListener("storage", function (event) {
    if (event.key !== KEY && event.key !== null) return;
    var choice = event.newValue;
    document.documentElement.dataset.theme = choice === "light" || choice === "dark" ? choice : "system";
  });
})();
