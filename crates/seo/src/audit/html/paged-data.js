  // The paged report: the file holds each table's first screen; the rest
  // loads from chunk files beside it (see paged.rs).
  var M = JSON.parse(document.getElementById("audit-data").textContent);
  // What the shared diff and member views read, filled as chunks load:
  // page rows by page number, opened clusters, texts by cluster position.
  var D = { threshold: M.threshold, pages: {}, clusters: [], texts: [], missing: [], bases: {} };
