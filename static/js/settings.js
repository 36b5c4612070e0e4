/* The settings page: keep each slider and its number in step, and show what the
   autosave (htmx, one request per field) answered, errors included.

   A field is saved 400 ms after typing stops, or at once when it is left (change).
   Its status never says "Saved" for a value the server has not stored: any other
   value reads "Unsaved…" until its answer comes. A text counts its characters as they
   are typed. Whatever is still waiting when the page is hidden or left is sent with
   fetch(keepalive), which outlives the page; the browser asks before leaving only when
   a field holds a value that was not saved, or one out of its bounds (a text too long),
   which will not be. A slider shows its number only while that number is within
   bounds; once the server refuses a value, the slider shows the one stored. */
(function () {
  "use strict";

  var form = document.getElementById("limits");
  if (!form) return;
  var csrfToken = form.querySelector("[name=csrfmiddlewaretoken]").value;

  // Per .setting: the value the server last stored (null: unknown, the page came back
  // with errors), the last value it refused, and the last value sent and not answered.
  var fields = new Map();

  function valueOf(setting) {
    var control = setting.querySelector("[name]");
    if (control.type === "checkbox") return control.checked ? control.value : "";
    return control.value;
  }

  function statusOf(setting) {
    return setting.querySelector(".setting-status");
  }

  function showsError(setting) {
    return statusOf(setting).querySelector(".error") !== null;
  }

  form.querySelectorAll(".setting").forEach(function (setting) {
    var value = valueOf(setting);
    fields.set(setting, { saved: showsError(setting) ? null : value, refused: null, inFlight: null });
  });

  function show(setting, className, text) {
    var span = document.createElement("span");
    span.className = className;
    span.textContent = text;
    statusOf(setting).replaceChildren(span);
    markInvalid(setting);
  }

  function markInvalid(setting) {
    var invalid = showsError(setting);
    setting.querySelectorAll("input[name], select[name], textarea[name]").forEach(function (control) {
      if (invalid) control.setAttribute("aria-invalid", "true");
      else control.removeAttribute("aria-invalid");
    });
  }

  // After an answer: if the field has changed since its request, that answer is not
  // about what the field shows now.
  function showUnsavedIfChangedSince(setting, sentValue) {
    var value = valueOf(setting);
    if (value !== sentValue && value !== fields.get(setting).saved) {
      show(setting, "unsaved", "Unsaved…");
    }
  }

  // Whether a number input holds a number its field can take: within its bounds, and
  // whole if it counts by ones. The server decides; this only spares the slider (and
  // the person leaving) a value bound to be refused.
  function withinBounds(number) {
    var validity = number.validity;
    if (number.value === "" || validity.badInput) return false;
    if (validity.rangeUnderflow || validity.rangeOverflow) return false;
    return !(number.step === "1" && validity.stepMismatch);
  }

  // A text's length as the server counts it: characters (not UTF-16 units), its ends
  // trimmed.
  function textLength(textarea) {
    return Array.from(textarea.value.trim()).length;
  }

  function tooLong(textarea) {
    return textLength(textarea) > Number(textarea.dataset.maxLength);
  }

  // "1,234 / 4,000 characters" under a text, in red past its bound.
  function showCount(textarea) {
    var count = document.getElementById(textarea.id.replace(/^id_/, "count-"));
    if (!count) return;
    var max = Number(textarea.dataset.maxLength);
    count.textContent =
      textLength(textarea).toLocaleString("en") + " / " + max.toLocaleString("en") + " characters";
    count.classList.toggle("over", tooLong(textarea));
  }

  form.querySelectorAll("textarea[data-max-length]").forEach(showCount);

  // A field whose value will not be stored: the server said so, or it is out of bounds.
  function unsavable(setting) {
    if (valueOf(setting) === fields.get(setting).saved) return false;
    if (showsError(setting)) return true;
    var text = setting.querySelector("textarea[data-max-length]");
    if (text !== null) return tooLong(text);
    var number = setting.querySelector("input[type=number]");
    return number !== null && !withinBounds(number);
  }

  function updateModelInUse(select) {
    var line = select.closest(".setting").querySelector(".model-in-use");
    if (line) {
      line.querySelector(".model-name").textContent = select.value || line.dataset.defaultModel;
    }
  }

  document.addEventListener("input", function (event) {
    var el = event.target;
    if (el.matches(".slider")) {
      var number = document.getElementById(el.dataset.for);
      if (number) number.value = el.value;
    } else if (el.matches(".setting input[type=number]")) {
      var slider = el.closest(".setting").querySelector(".slider");
      if (slider && withinBounds(el)) slider.value = el.value;
    } else if (el.matches("#id_model")) {
      updateModelInUse(el);
    } else if (el.matches("textarea[data-max-length]")) {
      showCount(el);
    }
    var setting = el.closest(".setting");
    var state = setting && fields.get(setting);
    if (!state) return;
    if (valueOf(setting) !== state.saved) show(setting, "unsaved", "Unsaved…");
    else if (state.inFlight === null) show(setting, "saved", "✓ Saved");
  });

  // The setting whose status an htmx event is about, or null.
  function settingOf(event) {
    var target = event.detail.target;
    var isStatus = target && target.classList && target.classList.contains("setting-status");
    return isStatus ? target.closest(".setting") : null;
  }

  // The 400 ms wait and the change both fire for one edit: send each value once. A value
  // whose refusal is on show is not sent again when the field is left: it would be
  // refused again, and its error would give way to "Saving…" meanwhile.
  document.addEventListener("htmx:confirm", function (event) {
    var setting = settingOf(event);
    if (!setting) return;
    var state = fields.get(setting);
    var value = valueOf(setting);
    var settled =
      value === state.saved || (value === state.refused && showsError(setting));
    if (value === state.inFlight || (state.inFlight === null && settled)) {
      event.preventDefault();
    }
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var setting = settingOf(event);
    if (!setting) return;
    var value = valueOf(setting);
    event.detail.xhr.settingValue = value;
    fields.get(setting).inFlight = value;
    show(setting, "saving", "Saving…");
  });

  // What the server answered about `value`: 200 stored it, 400 refused it (and the
  // slider goes back to the stored value, if the field still holds the refused one).
  function answered(setting, value, status) {
    var state = fields.get(setting);
    if (status === 200) state.saved = value;
    if (status === 400) state.refused = value;
    if (state.inFlight === value) state.inFlight = null;
    var slider = setting.querySelector(".slider");
    if (status === 400 && slider && state.saved !== null && valueOf(setting) === value) {
      slider.value = state.saved;
    }
  }

  // A 400 carries the field's errors: show them like any answer.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var setting = settingOf(event);
    if (!setting) return;
    var xhr = event.detail.xhr;
    answered(setting, xhr.settingValue, xhr.status);
    if (xhr.status === 400) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var setting = settingOf(event);
    if (!setting) return;
    markInvalid(setting);
    showUnsavedIfChangedSince(setting, event.detail.xhr.settingValue);
  });

  function notSaved(setting, value, why) {
    var state = fields.get(setting);
    if (state.inFlight === value) state.inFlight = null;
    show(setting, "error", "Not saved: " + why);
  }

  function serverRefused(status) {
    return status === 403
      ? "your session has expired; reload the page and log in again."
      : "the server answered " + status + ". Try again.";
  }

  var UNREACHABLE = "the server could not be reached. Check your connection and try again.";

  document.addEventListener("htmx:responseError", function (event) {
    var setting = settingOf(event);
    var xhr = event.detail.xhr;
    if (setting) notSaved(setting, xhr.settingValue, serverRefused(xhr.status));
  });

  document.addEventListener("htmx:sendError", function (event) {
    var setting = settingOf(event);
    if (setting) notSaved(setting, event.detail.xhr.settingValue, UNREACHABLE);
  });

  // Send every value not yet answered; a request in flight is sent again, as leaving
  // the page may cut it off.
  function flush() {
    fields.forEach(function (state, setting) {
      var value = valueOf(setting);
      var settled = value === state.saved || value === state.refused;
      if (state.inFlight === null && settled) return;
      state.inFlight = value;
      show(setting, "saving", "Saving…");
      var control = setting.querySelector("[name]");
      var body = new FormData();
      body.append("csrfmiddlewaretoken", csrfToken);
      if (control.type !== "checkbox" || control.checked) body.append(control.name, value);
      fetch(setting.getAttribute("hx-post"), {
        method: "POST",
        body: body,
        headers: { "X-CSRFToken": csrfToken },
        credentials: "same-origin",
        keepalive: true,
      })
        .then(function (response) {
          return response.text().then(function (html) {
            if (response.status !== 200 && response.status !== 400) {
              notSaved(setting, value, serverRefused(response.status));
              return;
            }
            answered(setting, value, response.status);
            htmx.swap(statusOf(setting), html, { swapStyle: "innerHTML" });
            markInvalid(setting);
            showUnsavedIfChangedSince(setting, value);
          });
        })
        .catch(function () {
          notSaved(setting, value, UNREACHABLE);
        });
    });
  }

  // Enter in a field saves that field (its change event), not the whole form.
  form.addEventListener("submit", function (event) {
    event.preventDefault();
  });

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") flush();
  });
  window.addEventListener("pagehide", flush);
  window.addEventListener("beforeunload", function (event) {
    var lost = Array.from(fields.keys()).some(unsavable);
    flush(); // the rest is sent now, before the next page is asked for
    if (lost) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // A form that asks first (a token's Revoke): its question is in data-confirm.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form.dataset && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
      event.preventDefault();
    }
  });
})();
