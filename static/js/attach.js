// The composer's Attach: each file chosen is uploaded at once into the user's documents
// (POST /attachments/, with the Documents page's own checks). The answer is the file's
// chip, put above the message: its hidden input sends the document's id with the
// message, and × takes it off again. A refused file is said beside the composer, in the
// Documents page's words, and the text typed stays as it is. The message waits for a
// file on its way; once it is sent, its chips go with it.
(function () {
  "use strict";

  function byId(id) { return document.getElementById(id); }

  var button = byId("attach-button");
  var input = byId("attach-file");
  var chips = byId("composer-attachments");
  var error = byId("attach-error");
  if (!button || !input || !chips || !error || !window.fetch || !window.FormData) return;
  var form = button.closest("form");
  var csrf = form.querySelector("[name=csrfmiddlewaretoken]").value;
  var uploading = 0;
  input.multiple = true;
  button.hidden = false;

  function say(text) {
    error.textContent = text;
  }

  function busy(change) {
    uploading += change;
    button.setAttribute("aria-busy", uploading > 0 ? "true" : "false");
    button.classList.toggle("uploading", uploading > 0);
  }

  // A chip that says the file is on its way, replaced by the real one (or removed).
  function pending(file) {
    var chip = document.createElement("span");
    chip.className = "attachment-chip pending";
    chip.setAttribute("role", "status");
    chip.textContent = "Attaching " + file.name + "…";
    chips.append(chip);
    return chip;
  }

  function refusal(status, text) {
    if (status === 400 || status === 413) return text;
    if (status === 403) return "Your session has expired: reload the page and log in again.";
    return "The file could not be attached (the server answered " + status + "). Try again.";
  }

  function upload(file) {
    var chip = pending(file);
    var body = new FormData();
    body.append("file", file);
    busy(1);
    fetch(button.dataset.upload, {
      method: "POST",
      body: body,
      headers: { "X-CSRFToken": csrf },
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.text().then(function (text) {
          if (response.status === 201) {
            chip.insertAdjacentHTML("afterend", text);
            chip.remove();
          } else {
            chip.remove();
            say(refusal(response.status, text));
          }
        });
      })
      .catch(function () {
        chip.remove();
        say("The file could not be attached: the server could not be reached. Try again.");
      })
      .finally(function () { busy(-1); });
  }

  button.addEventListener("click", function () {
    input.click();
  });

  input.addEventListener("change", function () {
    var files = Array.prototype.slice.call(input.files);
    input.value = "";
    if (files.length) say("");
    files.forEach(upload);
  });

  chips.addEventListener("click", function (event) {
    var remove = event.target.closest(".attachment-remove");
    if (!remove) return;
    remove.closest(".attachment-chip").remove();
    byId("composer-input").focus();
  });

  // A message is not sent while a file is on its way: it would go without it.
  document.addEventListener("submit", function (event) {
    if (event.target !== form || uploading === 0) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    say("A file is still being attached: send once it shows above your message.");
  }, true);

  // Sent (the page shows no refusal of the message): its attachments went with it.
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt !== form || !event.detail.successful) return;
    var refused = byId("composer-error");
    if (refused && refused.textContent.trim()) return;
    chips.querySelectorAll(".attachment-chip:not(.pending)").forEach(function (chip) {
      chip.remove();
    });
    say("");
  });
})();
