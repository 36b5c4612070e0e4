// The top bar's ☰ on a narrow screen: shows or hides the sidebar, and says which.
(function () {
  "use strict";

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest && event.target.closest(".sidebar-toggle");
    if (!toggle) return;
    var open = document.body.classList.toggle("sidebar-open");
    toggle.setAttribute("aria-expanded", String(open));
  });
})();
