// Copy buttons: a code block's code, an answer's Markdown.

export function addCopyButtons(root) {
  root.querySelectorAll(".code-head:not([data-copy])").forEach(function (head) {
    head.dataset.copy = "1";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy-code";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy code");
    head.appendChild(button);
  });
}

function copied(button, text) {
  navigator.clipboard.writeText(text).then(function () {
    var label = button.textContent;
    button.textContent = "Copied";
    setTimeout(function () { button.textContent = label; }, 1500);
  });
}

export function copyOnClick(event) {
  var button = event.target.closest && event.target.closest(".copy-code, .copy-answer");
  if (!button) return;
  if (button.classList.contains("copy-code")) {
    copied(button, button.closest(".code-block").querySelector("pre").textContent);
  } else {
    // the Markdown the Oracle wrote; what is drawn, for an answer kept without it
    var answer = button.closest(".msg");
    var source = answer.querySelector(".answer-source");
    copied(button, source && source.value ? source.value : answer.querySelector(".msg-body").innerText.trim());
  }
}
