// Maths in what the Oracle and its users write. The server marks it (markup/markdown.py):
// `.math.inline` for `$...$`, `.math.block` and `.math.display` for `$$...$$`, each
// holding its TeX as text; KaTeX typesets it here, when the page loads and whenever
// htmx puts new content in (a streamed answer's pieces, the final answer, a new turn).
// KaTeX's defaults keep it inert: no trust (\href, \url, \includegraphics and the \html
// commands are shown as errors, never made), and TeX it cannot read shows as its source.
(function () {
  "use strict";

  var OPTIONS = {
    throwOnError: false, // bad TeX: its source, in the error colour
    errorColor: "var(--danger)", // readable in either theme
    trust: false,
    strict: "ignore", // what LaTeX would not take but KaTeX can draw is drawn, quietly
    maxSize: 25, // ems: a \rule or a space cannot cover the page
    maxExpand: 1000,
  };

  function typeset(root) {
    if (!window.katex || !root || !root.querySelectorAll) return;
    root.querySelectorAll(".math:not([data-typeset])").forEach(function (el) {
      el.dataset.typeset = "";
      var options = Object.assign({ displayMode: !el.classList.contains("inline") }, OPTIONS);
      katex.render(el.textContent, el, options);
    });
  }

  // Where htmx put something: around its target (content can go before or in place of
  // it), or the whole page when the target itself was replaced.
  function typesetSwapped(event) {
    var target = event.detail.target;
    typeset(target && target.isConnected && target.parentNode ? target.parentNode : document);
  }

  document.addEventListener("DOMContentLoaded", function () { typeset(document); });
  document.addEventListener("htmx:afterSwap", typesetSwapped);
  document.addEventListener("htmx:oobAfterSwap", typesetSwapped);
})();
