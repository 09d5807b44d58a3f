"use strict";
// Any script error is shown in the page itself, so a headless browser's
// DOM dump (and a reader) sees it.
function reportError(msg) {
  var box = document.getElementById("js-errors");
  box.hidden = false;
  box.textContent += "JS error: " + msg + "\n";
}
window.onerror = function (msg, src, line, col) { reportError(msg + " (line " + line + ":" + col + ")"); };
window.addEventListener("unhandledrejection", function (e) { reportError(String(e.reason)); });

(function () {
