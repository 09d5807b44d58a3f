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

