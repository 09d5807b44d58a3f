  // The diff opens as an overlay over the page rather than by scrolling to
  // a section: the reader keeps their place in the tables behind it.
  var overlay = document.getElementById("diff-overlay");
  var returnTo = "";
  function closeDiff() {
    overlay.hidden = true;
    document.body.classList.remove("modal-open");
    if (/^#diff=/.test(location.hash)) history.replaceState(null, "", returnTo || location.pathname + location.search);
  }
  function openFromHash() {
    var m = /^#diff=(\d+),(\d+)$/.exec(location.hash);
    if (!m) { if (!overlay.hidden) closeDiff(); return; }
    showDiff(+m[1], +m[2]);
    overlay.hidden = false;
    document.body.classList.add("modal-open");
  }
  window.addEventListener("hashchange", function (e) {
    var old = e.oldURL.split("#")[1];
    if (old && !/^diff=/.test(old)) returnTo = "#" + old;
    openFromHash();
    openClusterFromHash();
  });
  document.getElementById("diff-close").onclick = closeDiff;
  overlay.addEventListener("click", function (e) { if (e.target === overlay) closeDiff(); });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape" && !overlay.hidden) closeDiff(); });

