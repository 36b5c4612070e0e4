/* The settings page: keep each slider and its number in step, and show what the
   autosave (htmx, one request per field) answered, errors included. */
(function () {
  "use strict";

  document.addEventListener("input", function (event) {
    var el = event.target;
    if (el.matches(".slider")) {
      var number = document.getElementById(el.dataset.for);
      if (number) number.value = el.value;
    } else if (el.matches(".setting input[type=number]")) {
      var slider = el.closest(".setting").querySelector(".slider");
      if (slider && el.value !== "") slider.value = el.value;
    }
  });

  function isSettingRequest(event) {
    var target = event.detail.target;
    return target && target.classList && target.classList.contains("setting-status");
  }

  function markInvalid(status) {
    var setting = status.closest(".setting");
    var invalid = status.querySelector(".error") !== null;
    setting.querySelectorAll("input[name], select[name]").forEach(function (control) {
      if (invalid) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
    });
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (isSettingRequest(event)) {
      event.detail.target.innerHTML = '<span class="saving">Saving…</span>';
    }
  });

  // A 400 carries the field's errors: show them like any answer.
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (isSettingRequest(event) && event.detail.xhr.status === 400) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    if (isSettingRequest(event)) markInvalid(event.detail.target);
  });

  function notSaved(event, why) {
    if (!isSettingRequest(event)) return;
    var span = document.createElement("span");
    span.className = "error";
    span.textContent = "Not saved: " + why;
    event.detail.target.replaceChildren(span);
  }

  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr.status;
    notSaved(event, status === 403
      ? "your session has expired; reload the page and log in again."
      : "the server answered " + status + ". Try again.");
  });

  document.addEventListener("htmx:sendError", function (event) {
    notSaved(event, "the server could not be reached. Check your connection and try again.");
  });
})();
