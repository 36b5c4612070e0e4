// What the page needs before its first paint, so loaded in <head> without `defer`:
// the theme (the choice theme.js stored, else the system's) and the `js` class, by which
// the CSS shows the controls that need script and hides their stand-ins.
(function () {
  "use strict";

  var choice = null;
  try { choice = localStorage.getItem("oracle-theme"); } catch (e) { /* storage is off */ }
  var root = document.documentElement;
  root.dataset.theme = choice === "light" || choice === "dark" ? choice : "system";
  root.classList.add("js");
})();
