// The Documents page: files dropped on the zone or chosen with the button are uploaded one
// request each through the API, with XMLHttpRequest (fetch reports no upload progress), each
// with its own progress bar and, when refused, the reason next to it. After an upload the
// list is fetched again (htmx, on the body's "documents-changed" event).
(function () {
  "use strict";

  const form = document.getElementById("upload-form");
  if (!form || !window.FormData || !window.XMLHttpRequest) return;
  const input = document.getElementById("upload-file");
  const uploads = document.getElementById("uploads");
  const csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  const maxBytes = Number(form.dataset.maxBytes);
  const maxLabel = form.dataset.maxLabel;

  function size(bytes) {
    if (bytes < 1024) return bytes + " bytes";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / 1024 / 1024).toFixed(1) + " MB";
  }

  function element(tag, className, text) {
    const node = document.createElement(tag);
    node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function item(file) {
    const row = element("li", "upload");
    const progress = element("progress", "upload-progress");
    progress.max = 100;
    progress.value = 0;
    progress.setAttribute("aria-label", "Uploading " + file.name);
    const status = element("p", "upload-status", "Waiting…");
    row.append(element("span", "upload-name", file.name), element("span", "upload-size", size(file.size)), progress, status);
    uploads.prepend(row);
    return {
      progress: function (percent) {
        progress.value = percent;
        status.textContent = percent < 100 ? "Uploading… " + Math.round(percent) + " %" : "Reading the text…";
      },
      done: function (text) {
        row.classList.add("done");
        status.textContent = text;
      },
      failed: function (text) {
        row.classList.add("failed");
        status.setAttribute("role", "alert");
        status.textContent = text;
      },
    };
  }

  function reason(xhr) {
    try {
      const body = JSON.parse(xhr.responseText);
      const errors = body.errors ? Object.values(body.errors).flat() : [];
      if (errors.length) return errors.join(" ");
      if (body.error) return body.error;
    } catch (error) { /* not JSON: a proxy's page */ }
    return "The upload failed (" + (xhr.status || "no answer") + "). Try again.";
  }

  function upload(file) {
    const shown = item(file);
    if (file.size > maxBytes) {
      shown.failed(file.name + " is " + size(file.size) + "; files can be at most " + maxLabel + ".");
      return;
    }
    const xhr = new XMLHttpRequest();
    xhr.open("POST", form.dataset.api);
    xhr.setRequestHeader("X-CSRFToken", csrf);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) shown.progress((event.loaded / event.total) * 100);
    });
    xhr.upload.addEventListener("load", function () { shown.progress(100); });
    xhr.addEventListener("load", function () {
      if (xhr.status === 201) {
        const body = JSON.parse(xhr.responseText);
        shown.done("Added: " + body.passages + " passage" + (body.passages === 1 ? "" : "s") + " to search.");
        if (window.htmx) window.htmx.trigger(document.body, "documents-changed");
        else window.location.reload();
      } else {
        shown.failed(reason(xhr));
      }
    });
    xhr.addEventListener("error", function () {
      shown.failed("The upload failed: the server could not be reached. Try again.");
    });
    const data = new FormData();
    data.append("file", file);
    shown.progress(0);
    xhr.send(data);
  }

  function uploadAll(files) {
    Array.prototype.forEach.call(files, upload);
  }

  input.addEventListener("change", function () {
    uploadAll(input.files);
    input.value = "";
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    uploadAll(input.files);
    input.value = "";
  });

  // A file dropped anywhere on the page is uploaded, not opened by the browser.
  let depth = 0;
  document.addEventListener("dragenter", function (event) {
    if (!event.dataTransfer || Array.prototype.indexOf.call(event.dataTransfer.types, "Files") < 0) return;
    depth += 1;
    form.classList.add("dragging");
  });
  document.addEventListener("dragleave", function () {
    depth = Math.max(0, depth - 1);
    if (!depth) form.classList.remove("dragging");
  });
  document.addEventListener("dragover", function (event) {
    event.preventDefault();
  });
  document.addEventListener("drop", function (event) {
    event.preventDefault();
    depth = 0;
    form.classList.remove("dragging");
    if (event.dataTransfer && event.dataTransfer.files.length) uploadAll(event.dataTransfer.files);
  });
})();
