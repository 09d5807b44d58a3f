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
  var D = JSON.parse(document.getElementById("audit-data").textContent);
  // Column positions in D.pages rows (see html.rs).
  var URL = 0, STATUS = 1, INDEX = 2, TITLE = 3, WORDS = 4, CLOSEST = 5, SIM = 6, NEAR = 7, CLUSTER = 8;
  var PAGE_SIZE = 50;

  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "class") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c == null) continue;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }
  function pct(x) { return x == null ? "" : (x * 100).toFixed(1) + "%"; }
  function url(p) { return D.pages[p][URL]; }
  function td(text, cls) { return el("td", cls ? { class: cls } : null, text == null ? "" : String(text)); }

  // A table shown a page at a time, with a filter box and sortable headers.
  function Table(sectionId, rows, render, opts) {
    opts = opts || {};
    var section = document.getElementById(sectionId);
    var tbody = section.querySelector("tbody");
    var pager = section.querySelector(".pager");
    var filter = section.querySelector(".filter");
    var state = { page: 0, shown: rows, sortCol: null, sortDir: 1 };
    var key = opts.key || function (r, c) { return r[c]; };
    function apply() {
      var q = filter ? filter.value.trim().toLowerCase() : "";
      var shown = rows.filter(function (r) {
        return (!q || opts.text(r).toLowerCase().indexOf(q) >= 0) && (!opts.keep || opts.keep(r));
      });
      if (state.sortCol != null) {
        var c = state.sortCol, d = state.sortDir;
        shown = shown.slice().sort(function (a, b) {
          var x = key(a, c), y = key(b, c);
          if (x == null && y == null) return 0;
          if (x == null) return 1;
          if (y == null) return -1;
          return (x < y ? -1 : x > y ? 1 : 0) * d;
        });
      }
      state.shown = shown;
      state.page = 0;
      draw();
    }
    function draw() {
      var pages = Math.max(1, Math.ceil(state.shown.length / PAGE_SIZE));
      if (state.page >= pages) state.page = pages - 1;
      var frag = document.createDocumentFragment();
      var start = state.page * PAGE_SIZE;
      state.shown.slice(start, start + PAGE_SIZE).forEach(function (r) { render(r, frag); });
      if (!state.shown.length) frag.appendChild(el("tr", null, el("td", { colspan: 9, class: "muted" }, "Nothing to show.")));
      tbody.replaceChildren(frag);
      pager.replaceChildren();
      if (pages > 1) {
        var prev = el("button", { type: "button" }, "‹ Previous"), next = el("button", { type: "button" }, "Next ›");
        prev.disabled = state.page === 0;
        next.disabled = state.page >= pages - 1;
        prev.onclick = function () { state.page--; draw(); };
        next.onclick = function () { state.page++; draw(); };
        pager.append(prev, el("span", null, "page " + (state.page + 1) + " of " + pages + " · " + state.shown.length + " rows"), next);
      } else {
        pager.append(el("span", null, state.shown.length + (state.shown.length === 1 ? " row" : " rows")));
      }
    }
    if (filter) filter.addEventListener("input", apply);
    section.querySelectorAll("th[data-sort]").forEach(function (th) {
      th.addEventListener("click", function () {
        var c = +th.getAttribute("data-sort");
        state.sortDir = state.sortCol === c ? -state.sortDir : (opts.descFirst && opts.descFirst(c) ? -1 : 1);
        state.sortCol = c;
        section.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(state.sortDir > 0 ? "asc" : "desc");
        apply();
      });
    });
    // Shows the page of the table that holds row `r`, clearing filters that hide it.
    function reveal(r) {
      if (state.shown.indexOf(r) < 0) {
        if (filter) filter.value = "";
        if (opts.unfilter) opts.unfilter();
        apply();
      }
      var i = state.shown.indexOf(r);
      if (i < 0) return false;
      state.page = Math.floor(i / PAGE_SIZE);
      draw();
      return true;
    }
    apply();
    return { apply: apply, reveal: reveal };
  }

  // ---- Texts and the word diff ----
  var textOf = {}, notStored = {};
  D.texts.forEach(function (t) { textOf[t[0]] = t; });
  (D.missing || []).forEach(function (p) { notStored[p] = true; });
  var baseWords = {};
  function words(page) {
    var t = textOf[page];
    if (!t) return null;
    var base = baseWords[t[1]] || (baseWords[t[1]] = D.bases[t[1]] ? D.bases[t[1]].split(" ") : []);
    var out = [];
    t[2].forEach(function (op) {
      if (typeof op === "string") Array.prototype.push.apply(out, op.split(" "));
      else for (var i = op[0]; i < op[0] + op[1]; i++) out.push(base[i]);
    });
    return out;
  }

  // Myers' O(ND) diff over words, after trimming the common ends. Returns
  // [tag, word] pairs for each side, tag "=" (shared), "-" or "+"; null when
  // the texts differ in more than MAX_D words (a diff would not help).
  var MAX_D = 6000;
  function diff(a, b) {
    var pre = 0;
    while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
    var suf = 0;
    while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
    var A = a.slice(pre, a.length - suf), B = b.slice(pre, b.length - suf), N = A.length, M = B.length;
    var off = N + M + 1, v = new Int32Array(2 * off + 2), trace = [], found = -1;
    for (var d = 0; d <= Math.min(N + M, MAX_D) && found < 0; d++) {
      for (var k = -d; k <= d; k += 2) {
        var x = (k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
        var y = x - k;
        while (x < N && y < M && A[x] === B[y]) { x++; y++; }
        v[off + k] = x;
        if (x >= N && y >= M) { found = d; break; }
      }
      trace.push(v.slice(off - d, off + d + 1));
    }
    if (found < 0) return null;
    var left = [], right = [];
    x = N; y = M;
    for (d = found; d > 0; d--) {
      var prev = trace[d - 1], pv = function (kk) { return prev[kk + d - 1]; };
      k = x - y;
      var pk = (k === -d || (k !== d && pv(k - 1) < pv(k + 1))) ? k + 1 : k - 1;
      var px = pv(pk), py = px - pk;
      while (x > px && y > py) { x--; y--; left.push(["=", A[x]]); right.push(["=", B[y]]); }
      if (x === px) { y--; right.push(["+", B[y]]); } else { x--; left.push(["-", A[x]]); }
    }
    while (x > 0 && y > 0) { x--; y--; left.push(["=", A[x]]); right.push(["=", B[y]]); }
    left.reverse(); right.reverse();
    var head = a.slice(0, pre).map(function (w) { return ["=", w]; });
    var tail = a.slice(a.length - suf).map(function (w) { return ["=", w]; });
    return { left: head.concat(left, tail), right: head.concat(right, tail) };
  }

  // Runs of same-tagged words become one element each; "\n" tokens become line breaks.
  function renderSide(tagged) {
    var box = el("div", { class: "text" });
    var i = 0;
    while (i < tagged.length) {
      var tag = tagged[i][0], run = [];
      while (i < tagged.length && tagged[i][0] === tag) run.push(tagged[i++][1]);
      var text = run.join(" ").replace(/ ?\n ?/g, "\n\n");
      box.appendChild(tag === "=" ? document.createTextNode(text) : el(tag === "-" ? "del" : "ins", null, text));
      box.appendChild(document.createTextNode(" "));
    }
    return box;
  }

  function pairSimilarity(a, b) {
    var c = D.clusters.find(function (c) { return c[0] === D.pages[a][CLUSTER]; });
    if (!c) return null;
    var m = function (p) { return c[8].find(function (x) { return x[0] === p; }); };
    if (c[9] === a && m(b)) return m(b)[1];
    if (c[9] === b && m(a)) return m(a)[1];
    return null;
  }

  // A same-text member's markup diff is kept against its cluster's
  // representative; shown for that pair either way round.
  function markupDiff(a, b) {
    var c = D.clusters.find(function (c) { return c[0] === D.pages[a][CLUSTER]; });
    var m = function (p) { return c && c[8].find(function (x) { return x[0] === p; }); };
    var mb = m(b), ma = m(a);
    if (mb && mb[4] && mb[4].against === a) return { d: mb[4], flip: false };
    if (ma && ma[4] && ma[4].against === b) return { d: ma[4], flip: true };
    return null;
  }

  function markupView(a, b) {
    var found = markupDiff(a, b);
    if (!found) return el("p", { class: "muted", id: "diff-markup-none" },
      "The markup of a same-text page is compared with its cluster's representative: compare each of these two with it.");
    var d = found.d, flip = found.flip;
    if (d.unavailable) return el("p", { class: "muted", id: "diff-markup-unavailable" }, "Markup: " + d.unavailable + ".");
    if (!d.hunks.length) return el("p", { class: "diffstats", id: "diff-markup-same" },
      "Markup: the same, once whitespace between tags is set aside" + (d.truncated ? " (as far as it was compared)." : "."));
    var n = function (k) { return k + " line" + (k === 1 ? "" : "s"); };
    var stats = "Markup, one tag a line: " + n(flip ? d.added : d.removed) + " only on the left, " +
      n(flip ? d.removed : d.added) + " only on the right" + (d.truncated ? " (the first changes shown)" : "");
    var pre = el("pre", { class: "markup" });
    d.hunks.forEach(function (h) {
      pre.append(el("span", { class: "hunk" }, "line " + (flip ? h.b : h.a) + " ↔ line " + (flip ? h.a : h.b) + "\n"));
      h.lines.forEach(function (l) {
        var tag = l[0], line = l.slice(1);
        if (flip && tag !== " ") tag = tag === "-" ? "+" : "-";
        pre.append(tag === " " ? document.createTextNode("  " + line + "\n")
          : el(tag === "-" ? "del" : "ins", null, tag + " " + line + "\n"));
      });
    });
    return el("div", { id: "diff-markup" }, el("p", { class: "diffstats" }, stats), pre);
  }

  function showDiff(a, b) {
    var view = document.getElementById("diff-view");
    view.replaceChildren();
    if (!D.pages[a] || !D.pages[b]) { view.append(el("p", { class: "muted" }, "No such pages.")); return; }
    var wa = words(a), wb = words(b);
    view.append(el("div", { class: "diffhead" }, el("div", { id: "diff-a" }, url(a)), el("div", { id: "diff-b" }, url(b))));
    if (notStored[a] || notStored[b]) {
      var which = [a, b].filter(function (p) { return notStored[p]; }).map(url).join(" and ");
      view.append(el("p", { class: "muted", id: "diff-not-stored" }, "The index does not hold the text of " + which +
        " (stored before webdup kept texts, or added without them), so the pages cannot be compared word by word."));
      return;
    }
    if (!wa || !wb) { view.append(el("p", { class: "muted" }, "Texts are kept only for pages in clusters.")); return; }
    var r = diff(wa, wb);
    var sim = pairSimilarity(a, b);
    if (!r) {
      view.append(el("p", { class: "diffstats" }, "The texts differ too much for a word diff; shown as they are."),
        el("div", { class: "diffcols" }, renderSide(wa.map(function (w) { return ["=", w]; })), renderSide(wb.map(function (w) { return ["=", w]; }))));
      return;
    }
    if (wa.join(" ") === wb.join(" ")) {
      // Same text, different pages: two identical texts side by side would
      // say nothing, so show what the records tell apart.
      var fields = [["Title", TITLE], ["Status", STATUS], ["Indexability", INDEX], ["Canonical", 9], ["Robots noindex", 10]];
      var rows = fields.filter(function (f) { return D.pages[a][f[1]] !== D.pages[b][f[1]]; }).map(function (f) {
        return el("tr", null, el("th", null, f[0]), td(D.pages[a][f[1]] == null ? "—" : String(D.pages[a][f[1]])),
          td(D.pages[b][f[1]] == null ? "—" : String(D.pages[b][f[1]])));
      });
      var fieldRows = el("tbody");
      rows.forEach(function (r) { fieldRows.append(r); });
      view.append(el("p", { class: "diffstats", id: "diff-same-text" }, "Same text: the main texts are the same word for word (" +
        wa.length + " words); the pages differ outside them, in markup or lines the extractor left out."),
        rows.length ? el("table", { class: "member-table", id: "diff-fields" }, fieldRows)
          : el("p", { class: "muted" }, "Their title, status, canonical and robots are the same too."),
        markupView(a, b));
      return;
    }
    var removed = r.left.filter(function (t) { return t[0] === "-"; }).length;
    var added = r.right.filter(function (t) { return t[0] === "+"; }).length;
    var same = r.left.length - removed;
    var shared = (wa.length + wb.length) ? 2 * same / (wa.length + wb.length) : 1;
    var n = function (k, w) { return k + " " + w + (k === 1 ? "" : "s"); };
    var stats = (sim != null ? "Similarity (Jaccard) " + pct(sim) + " · " : "") + pct(shared) + " of words shared in order · " +
      n(removed, "word") + " only on the left, " + n(added, "word") + " only on the right";
    view.append(el("p", { class: "diffstats", id: "diff-stats" }, stats),
      el("div", { class: "diffcols" }, renderSide(r.left), renderSide(r.right)));
  }

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

  // ---- Clusters ----
  var byId = {};
  D.clusters.forEach(function (c) { byId[c[0]] = c; });
  var open = {};
  var statusFilter = document.querySelector("#clusters .status-filter");
  // Rows come worst first (c[10] is the severity rank); an issue names how
  // many members it concerns, its message (with their URLs) on hover.
  var clusterKey = [10, 0, 1, 2, 3, 4, null, 11, 12];
  var clusterTable = Table("clusters", D.clusters, function (c, frag) {
    var tr = el("tr", { class: "cluster" + (open[c[0]] ? " open" : ""), "data-cluster": c[0] });
    var issues = el("td");
    c[7].forEach(function (i) {
      issues.append(el("span", { class: "issue", title: i[1] }, el("code", null, i[0]), i[2] + " of " + c[2] + " members"));
    });
    if (!c[7].length) issues.append(el("span", { class: "muted" }, c[5] ? "handled by " + c[5] + (c[6] ? " → " + c[6] : "") : ""));
    var link = el("a", { href: "#cluster=" + c[0], title: "Link to this cluster" }, "#" + c[0]);
    link.onclick = function (e) { e.stopPropagation(); };
    tr.append(td(c[10], "num"), el("td", { class: "num" }, link), el("td", null, el("span", { class: "badge " + c[1] }, c[1])), td(c[2], "num"), td(pct(c[3]), "num"),
      el("td", null, el("span", { class: "badge " + c[4] }, c[4])), issues, td(c[11]),
      el("td", { class: "url" }, c[12], el("div", { class: "muted" }, c[13])));
    tr.onclick = function () { open[c[0]] = !open[c[0]]; clusterTable.apply(); };
    frag.appendChild(tr);
    if (open[c[0]]) frag.appendChild(memberRow(c));
  }, {
    text: function (c) { return c[8].map(function (m) { return url(m[0]); }).join(" ") + " " + c[7].map(function (i) { return i[0] + " " + i[1]; }).join(" ") + " " + c[11]; },
    keep: function (c) { return !statusFilter.value || c[4] === statusFilter.value; },
    key: function (c, col) { return col === 6 ? c[7].length : c[clusterKey[col]]; },
    descFirst: function (col) { return col === 3 || col === 6; },
    unfilter: function () { statusFilter.value = ""; },
  });
  statusFilter.addEventListener("change", function () { clusterTable.apply(); });

  function memberRow(c) {
    var rep = c[9];
    var table = el("table", { class: "member-table" }, el("thead", null, el("tr", null,
      el("th", null, "URL"), el("th", null, "Similarity"), el("th", null, "Containment"), el("th", null, "Status"),
      el("th", null, "Canonical"), el("th", null, "Robots"), el("th", null, ""))));
    var body = el("tbody");
    c[8].forEach(function (m) {
      var p = D.pages[m[0]];
      var cmp = m[0] === rep ? el("span", { class: "muted" }, c[12] === p[URL] ? "URL to keep" : "representative")
        : el("a", { href: "#diff=" + rep + "," + m[0] }, "compare with " + (c[12] === D.pages[rep][URL] ? "the URL to keep" : "representative"));
      body.append(el("tr", null, td(p[URL], "url"), td(m[3] === "near" ? pct(m[1]) : m[3], "num"), td(pct(m[2]), "num"), td(p[STATUS]),
        td(p[9] == null ? "—" : p[9] === p[URL] ? "self" : p[9], "url"), td(p[10] ? "noindex" : ""), el("td", null, cmp)));
    });
    table.append(body);
    var selA = el("select", { "aria-label": "First page" }), selB = el("select", { "aria-label": "Second page" });
    c[8].forEach(function (m, i) {
      selA.append(el("option", { value: m[0] }, url(m[0])));
      var o = el("option", { value: m[0] }, url(m[0]));
      if (i === 1) o.selected = true;
      selB.append(o);
    });
    var go = el("button", { type: "button" }, "Compare");
    go.onclick = function () { location.hash = "#diff=" + selA.value + "," + selB.value; };
    var keep = el("p", { class: "keep" }, "Keep ", el("b", null, c[12]), " — " + c[13] + (c[11] ? " · what differs: " + c[11] : ""));
    var cell = el("td", { colspan: 9 }, keep, table, el("div", { class: "pairpick" }, "Compare any two:", selA, selB, go));
    cell.onclick = function (e) { e.stopPropagation(); };
    return el("tr", { class: "members" }, cell);
  }

  // ---- Pages ----
  var rows = D.pages.map(function (p, i) { return i; });
  var dupsOnly = document.querySelector("#pages .dups-only");
  var pageTable = Table("pages", rows, function (i, frag) {
    var p = D.pages[i];
    var closest = p[CLOSEST] == null ? td("") : el("td", { class: "url" }, el("a", { href: "#diff=" + i + "," + p[CLOSEST] }, url(p[CLOSEST])));
    frag.appendChild(el("tr", null, td(p[URL], "url"), td(p[STATUS]), td(p[INDEX]), td(p[TITLE]), td(p[WORDS], "num"), closest,
      td(pct(p[SIM]), "num"), td(p[NEAR], "num"), td(p[CLUSTER] == null ? "" : "#" + p[CLUSTER], "num")));
  }, {
    text: function (i) { return D.pages[i][URL] + " " + (D.pages[i][TITLE] || ""); },
    keep: function (i) { return !dupsOnly.checked || D.pages[i][NEAR] > 0; },
    key: function (i, c) { var v = D.pages[i][c]; return c === CLOSEST ? (v == null ? null : url(v)) : v; },
    descFirst: function (c) { return c === SIM || c === NEAR || c === WORDS; },
  });
  dupsOnly.addEventListener("change", function () { pageTable.apply(); });

  // ---- Duplicate values, thin pages, errors ----
  function groupTable(id) {
    Table(id, D[id], function (g, frag) {
      var list = el("td", { class: "url" });
      g[1].forEach(function (p) { list.append(el("div", null, url(p))); });
      frag.appendChild(el("tr", null, td(g[0]), td(g[1].length, "num"), list));
    }, { text: function (g) { return g[0] + " " + g[1].map(url).join(" "); } });
  }
  groupTable("titles");
  groupTable("descriptions");
  groupTable("h1s");
  Table("thin", D.thin, function (i, frag) {
    frag.appendChild(el("tr", null, td(url(i), "url"), td(D.pages[i][WORDS], "num"), td(D.pages[i][TITLE])));
  }, { text: function (i) { return url(i) + " " + (D.pages[i][TITLE] || ""); } });
  Table("errors", D.errors, function (e, frag) {
    frag.appendChild(el("tr", null, td(url(e[0]), "url"), td(D.pages[e[0]][STATUS]), td(e[1]), td(e[2])));
  }, { text: function (e) { return url(e[0]) + " " + e[1] + " " + e[2]; } });

  // ---- Causes, parameters and, with a crawl, links to fix, folded URLs, the sitemap ----
  function rowTable(id, rows, numeric, descFirst) {
    if (!document.getElementById(id)) return;
    Table(id, rows, function (r, frag) {
      var tr = el("tr");
      r.forEach(function (v, i) {
        tr.append(td(v, numeric.indexOf(i) >= 0 ? "num" : typeof v === "string" && /^[a-z]+:\/\//i.test(v) ? "url" : null));
      });
      frag.appendChild(tr);
    }, {
      text: function (r) { return r.join(" "); },
      descFirst: function (c) { return descFirst.indexOf(c) >= 0; },
    });
  }
  rowTable("rollup", D.rollup, [0, 1], [0, 1]);
  rowTable("parameters", D.parameters, [2, 3], [2, 3]);
  rowTable("links", D.links, [], []);
  rowTable("folded", D.folded, [], []);
  rowTable("sitemap", D.sitemap, [], []);

  // `report.html#cluster=N` opens cluster N's members (a link to share).
  function openClusterFromHash() {
    var m = /^#cluster=(\d+)$/.exec(location.hash);
    var c = m && byId[+m[1]];
    if (!c) return;
    open[c[0]] = true;
    if (!clusterTable.reveal(c)) return;
    // Scroll only when the row is out of view (below the sticky header); CSS
    // keeps it clear of the header when it does.
    var row = document.querySelector('#clusters tr[data-cluster="' + c[0] + '"]');
    var header = document.querySelector("header").offsetHeight;
    var box = row && row.getBoundingClientRect();
    if (box && (box.top < header || box.bottom > window.innerHeight)) row.scrollIntoView({ block: "start" });
  }

  openFromHash();
  openClusterFromHash();
  document.body.setAttribute("data-ready", "1");
})();
