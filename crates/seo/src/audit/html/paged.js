  // ---- Chunks ----
  // A chunk is a script calling webdupChunk(name, data): browsers load
  // <script src> from disk where they block fetch(). The oldest chunks are
  // dropped past KEEP (a filter reads every chunk of a table once).
  var KEEP = 300;
  var cache = {}, loaded = [], waiting = {};
  window.webdupChunk = function (name, data) {
    if (waiting[name]) waiting[name].data = data;
    if (!cache[name]) loaded.push(name);
    cache[name] = data;
    while (loaded.length > KEEP) delete cache[loaded.shift()];
  };
  function load(name) {
    if (cache[name]) return Promise.resolve(cache[name]);
    if (waiting[name]) return waiting[name].promise;
    var w = waiting[name] = {};
    w.promise = new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = M.dir + "/" + name + ".js";
      s.onload = function () {
        s.remove();
        delete waiting[name];
        if (w.data) resolve(w.data); else reject(new Error(s.src + " holds no data"));
      };
      s.onerror = function () {
        s.remove();
        delete waiting[name];
        reject(new Error("cannot load " + M.dir + "/" + name + ".js: keep the " + M.dir + " folder beside report.html"));
      };
      document.head.appendChild(s);
    });
    return w.promise;
  }
  function fail(e) { reportError(e && e.message ? e.message : String(e)); }
  // Loads `names` (distinct) and returns their data by name.
  function loadAll(names) {
    var by = {};
    return Promise.all(names.map(function (n) { return load(n).then(function (c) { by[n] = c; }); }))
      .then(function () { return by; });
  }

  // A table whose rows, sort orders and first screen come from M.tables[name]:
  // data chunks of T.chunk rows in row order, order chunks of T.order row
  // numbers per sortable column (empty cells last, T.sorts[col] before them).
  function PagedTable(name, render, opts) {
    opts = opts || {};
    var T = M.tables[name], section = document.getElementById(name);
    if (!T || !section) return null;
    var tbody = section.querySelector("tbody"), pager = section.querySelector(".pager");
    var filter = section.querySelector(".filter");
    var first = {};
    T.first.forEach(function (r) { first[r[0]] = r[1]; });
    // ids: the filtered view's rows in order, or null for all rows.
    var st = { page: 0, col: null, dir: 1, ids: null, total: T.rows, gen: 0, drawGen: 0 };
    function dataChunk(id) { return name + "-" + Math.floor(id / T.chunk); }
    function orderChunk(col, p) { return name + "-s" + col + "-" + Math.floor(p / T.order); }
    function rowsOf(ids) {
      var have = {}, need = {};
      ids.forEach(function (id) {
        var c = cache[dataChunk(id)], r = c ? c.rows[id % T.chunk] : first[id];
        if (r !== undefined) have[id] = r; else need[dataChunk(id)] = 1;
      });
      return loadAll(Object.keys(need)).then(function (by) {
        return ids.map(function (id) { return id in have ? have[id] : by[dataChunk(id)].rows[id % T.chunk]; });
      });
    }
    function sortOf() { return st.col != null ? [st.col, st.dir] : T["default"] != null ? [T["default"], 1] : null; }
    // Rows at view positions [start, end) when nothing is filtered.
    function idsAt(start, end) {
      end = Math.min(end, T.rows);
      // The first screen of the default view is in the file.
      if (start === 0 && st.col == null && end <= T.first.length) return Promise.resolve(T.first.slice(0, end).map(function (r) { return r[0]; }));
      var s = sortOf(), out = [];
      if (!s) { for (var i = start; i < end; i++) out.push(i); return Promise.resolve(out); }
      var col = s[0], nn = T.sorts[col], pos = [];
      for (var p = start; p < end; p++) pos.push(s[1] > 0 || p >= nn ? p : nn - 1 - p);
      var names = {};
      pos.forEach(function (q) { names[orderChunk(col, q)] = 1; });
      return loadAll(Object.keys(names)).then(function (by) {
        return pos.map(function (q) { return by[orderChunk(col, q)][q % T.order]; });
      });
    }
    // Every row in the sort's order.
    function fullOrder(s) {
      var names = [];
      for (var p = 0; p < T.rows; p += T.order) names.push(orderChunk(s[0], p));
      return loadAll(names).then(function (by) {
        var all = [].concat.apply([], names.map(function (n) { return by[n]; }));
        if (s[1] > 0) return all;
        var nn = T.sorts[s[0]];
        return all.slice(0, nn).reverse().concat(all.slice(nn));
      });
    }
    // Row numbers of the rows `test` keeps, reading every data chunk a few at a time.
    function scan(test, progress) {
      var n = Math.ceil(T.rows / T.chunk), parts = [], next = 0, done = 0, busy = 0;
      return new Promise(function (resolve, reject) {
        function pump() {
          while (busy < 6 && next < n) {
            (function (k) {
              busy++;
              load(name + "-" + k).then(function (c) {
                var m = [];
                c.rows.forEach(function (r, i) { if (test(r, c)) m.push(k * T.chunk + i); });
                parts[k] = m;
                busy--;
                progress(++done, n);
                if (done === n) resolve([].concat.apply([], parts)); else pump();
              }, reject);
            })(next++);
          }
        }
        if (!n) resolve([]); else pump();
      });
    }
    function note(text) { pager.replaceChildren(el("span", { class: "muted" }, text)); }
    function apply() {
      var gen = ++st.gen;
      var q = filter ? filter.value.trim().toLowerCase() : "";
      var keep = opts.keep ? opts.keep() : null;
      st.page = 0;
      if (!q && !keep) { st.ids = null; st.total = T.rows; return draw(); }
      note("Filtering…");
      return scan(function (r, c) {
        return (!q || opts.text(r, c).toLowerCase().indexOf(q) >= 0) && (!keep || keep(r));
      }, function (d, n) { if (gen === st.gen) note("Filtering… " + Math.round(100 * d / n) + "%"); }).then(function (ids) {
        var s = sortOf();
        if (!s || gen !== st.gen) return ids;
        var kept = new Uint8Array(T.rows);
        ids.forEach(function (i) { kept[i] = 1; });
        return fullOrder(s).then(function (o) { return o.filter(function (i) { return kept[i]; }); });
      }).then(function (ids) {
        if (gen !== st.gen) return;
        st.ids = ids;
        st.total = ids.length;
        return draw();
      });
    }
    function draw() {
      var gen = ++st.drawGen;
      var pages = Math.max(1, Math.ceil(st.total / PAGE_SIZE));
      if (st.page >= pages) st.page = pages - 1;
      var start = st.page * PAGE_SIZE, ids;
      var got = st.ids ? Promise.resolve(st.ids.slice(start, start + PAGE_SIZE)) : idsAt(start, start + PAGE_SIZE);
      return got.then(function (x) { ids = x; return rowsOf(ids); }).then(function (rows) {
        if (gen !== st.drawGen) return;
        var frag = document.createDocumentFragment();
        rows.forEach(function (r, i) { render(r, frag, ids[i]); });
        if (!rows.length) frag.appendChild(el("tr", null, el("td", { colspan: 9, class: "muted" }, "Nothing to show.")));
        tbody.replaceChildren(frag);
        pager.replaceChildren();
        if (pages > 1) {
          var prev = el("button", { type: "button" }, "‹ Previous"), next = el("button", { type: "button" }, "Next ›");
          prev.disabled = st.page === 0;
          next.disabled = st.page >= pages - 1;
          prev.onclick = function () { st.page--; draw().catch(fail); };
          next.onclick = function () { st.page++; draw().catch(fail); };
          pager.append(prev, el("span", null, "page " + (st.page + 1) + " of " + pages + " · " + st.total + " rows"), next);
        } else {
          pager.append(el("span", null, st.total + (st.total === 1 ? " row" : " rows")));
        }
        // Counts redraws, so a test or benchmark can wait for the next one.
        section.setAttribute("data-drawn", +(section.getAttribute("data-drawn") || 0) + 1);
      });
    }
    var typing = null;
    if (filter) filter.addEventListener("input", function () {
      clearTimeout(typing);
      typing = setTimeout(function () { apply().catch(fail); }, 250);
    });
    section.querySelectorAll("th[data-sort]").forEach(function (th) {
      th.addEventListener("click", function () {
        var c = +th.getAttribute("data-sort");
        st.dir = st.col === c ? -st.dir : (opts.descFirst && opts.descFirst(c) ? -1 : 1);
        st.col = c;
        section.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(st.dir > 0 ? "asc" : "desc");
        apply().catch(fail);
      });
    });
    // Shows the page of the view that holds row `id`, clearing filters that hide it.
    function reveal(id, cleared) {
      if (!(id >= 0 && id < T.rows)) return Promise.resolve(false);
      var s = sortOf();
      var find = st.ids ? Promise.resolve(st.ids.indexOf(id))
        : s ? fullOrder(s).then(function (o) { return o.indexOf(id); }) : Promise.resolve(id);
      return find.then(function (i) {
        if (i < 0) {
          if (cleared) return false;
          if (filter) filter.value = "";
          if (opts.unfilter) opts.unfilter();
          return apply().then(function () { return reveal(id, true); });
        }
        st.page = Math.floor(i / PAGE_SIZE);
        return draw().then(function () { return true; });
      });
    }
    return { apply: apply, draw: draw, reveal: reveal, ready: draw() };
  }

  // ---- Clusters ----
  var CT = M.tables.clusters;
  function clusterPos(id) { return M.clusterPos ? M.clusterPos[id] : id - 1; }
  // Texts by page, as the shared diff reads them (D.texts stays empty).
  function addTexts(t) {
    for (var pos in t.B) D.bases[pos] = t.B[pos];
    for (var p in t.T) textOf[p] = t.T[p];
    t.M.forEach(function (p) { notStored[p] = true; });
  }
  // Clusters opened or compared: their whole rows, members' pages in D.pages.
  var full = {};
  function ensureCluster(pos) {
    if (full[pos]) return Promise.resolve(full[pos]);
    var k = Math.floor(pos / CT.chunk);
    return Promise.all([load("clusters-" + k), load("clusters-t" + k)]).then(function (cs) {
      var c = cs[0].rows[pos % CT.chunk];
      c[8].forEach(function (m) { D.pages[m[0]] = cs[0].P[m[0]]; });
      addTexts(cs[1]);
      if (!full[pos]) D.clusters.push(c);
      return (full[pos] = c);
    });
  }
  var open = {};
  var statusFilter = document.querySelector("#clusters .status-filter");
  // An issue names how many members it concerns, its message (with their URLs) on hover.
  var clusterTable = PagedTable("clusters", function (c, frag, pos) {
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
    tr.onclick = function () {
      var opening = !open[c[0]];
      (opening ? ensureCluster(pos) : Promise.resolve()).then(function () {
        open[c[0]] = opening;
        return clusterTable.draw();
      }).catch(fail);
    };
    frag.appendChild(tr);
    if (open[c[0]] && full[pos]) frag.appendChild(memberRow(full[pos]));
  }, {
    text: function (c, chunk) {
      return c[8].map(function (m) { return chunk.P[m[0]][URL]; }).join(" ") + " " +
        c[7].map(function (i) { return i[0] + " " + i[1]; }).join(" ") + " " + c[11];
    },
    keep: function () { var v = statusFilter.value; return v ? function (c) { return c[4] === v; } : null; },
    descFirst: function (col) { return col === 3 || col === 6; },
    unfilter: function () { statusFilter.value = ""; },
  });
  statusFilter.addEventListener("change", function () { clusterTable.apply().catch(fail); });

  // ---- Pages ----
  var dupsOnly = document.querySelector("#pages .dups-only");
  var pageTable = PagedTable("pages", function (p, frag, i) {
    var closest = p[CLOSEST] == null ? td("") : el("td", { class: "url" }, el("a", { href: "#diff=" + i + "," + p[CLOSEST] }, p[11]));
    frag.appendChild(el("tr", null, td(p[URL], "url"), td(p[STATUS]), td(p[INDEX]), td(p[TITLE]), td(p[WORDS], "num"), closest,
      td(pct(p[SIM]), "num"), td(p[NEAR], "num"), td(p[CLUSTER] == null ? "" : "#" + p[CLUSTER], "num")));
  }, {
    text: function (p) { return p[URL] + " " + (p[TITLE] || ""); },
    keep: function () { return dupsOnly.checked ? function (p) { return p[NEAR] > 0; } : null; },
    descFirst: function (c) { return c === SIM || c === NEAR || c === WORDS; },
  });
  dupsOnly.addEventListener("change", function () { pageTable.apply().catch(fail); });

  // ---- Duplicate values, thin pages, errors: rows carry their URLs ----
  var tables = [clusterTable, pageTable];
  ["titles", "descriptions", "h1s"].forEach(function (id) {
    tables.push(PagedTable(id, function (g, frag) {
      var list = el("td", { class: "url" });
      g[2].forEach(function (u) { list.append(el("div", null, u)); });
      if (g[2].length < g[1]) list.append(el("div", { class: "muted" }, "and " + (g[1] - g[2].length) + " more (pages.csv lists them)"));
      frag.appendChild(el("tr", null, td(g[0]), td(g[1], "num"), list));
    }, { text: function (g) { return g[0] + " " + g[2].join(" "); } }));
  });
  tables.push(PagedTable("thin", function (t, frag) {
    frag.appendChild(el("tr", null, td(t[0], "url"), td(t[1], "num"), td(t[2])));
  }, { text: function (t) { return t[0] + " " + (t[2] || ""); } }));
  tables.push(PagedTable("errors", function (e, frag) {
    frag.appendChild(el("tr", null, td(e[0], "url"), td(e[1]), td(e[2]), td(e[3])));
  }, { text: function (e) { return e[0] + " " + e[2] + " " + e[3]; } }));

  // ---- Causes, parameters and, with a crawl, links to fix, folded URLs, the sitemap ----
  function rowTable(id, numeric, descFirst) {
    tables.push(PagedTable(id, function (r, frag) {
      var tr = el("tr");
      r.forEach(function (v, i) {
        tr.append(td(v, numeric.indexOf(i) >= 0 ? "num" : typeof v === "string" && /^[a-z]+:\/\//i.test(v) ? "url" : null));
      });
      frag.appendChild(tr);
    }, {
      text: function (r) { return r.join(" "); },
      descFirst: function (c) { return descFirst.indexOf(c) >= 0; },
    }));
  }
  rowTable("rollup", [0, 1], [0, 1]);
  rowTable("parameters", [2, 3], [2, 3]);
  rowTable("links", [], []);
  rowTable("folded", [], []);
  rowTable("sitemap", [], []);

  // ---- The diff overlay: what the two pages need loads first ----
  var overlay = document.getElementById("diff-overlay");
  var returnTo = "";
  function closeDiff() {
    overlay.hidden = true;
    document.body.classList.remove("modal-open");
    if (/^#diff=/.test(location.hash)) history.replaceState(null, "", returnTo || location.pathname + location.search);
  }
  // The two pages' rows, then their clusters' rows and texts.
  function loadForDiff(a, b) {
    var PT = M.tables.pages, chunk = function (p) { return "pages-" + Math.floor(p / PT.chunk); };
    var names = {};
    [a, b].forEach(function (p) { if (p < PT.rows && !D.pages[p]) names[chunk(p)] = 1; });
    return loadAll(Object.keys(names)).then(function (by) {
      [a, b].forEach(function (p) { if (by[chunk(p)]) D.pages[p] = by[chunk(p)].rows[p % PT.chunk]; });
      var ps = [a, b].filter(function (p) { return D.pages[p] && D.pages[p][CLUSTER] != null; });
      return Promise.all(ps.map(function (p) { return ensureCluster(clusterPos(D.pages[p][CLUSTER])); }));
    });
  }
  function openFromHash() {
    var m = /^#diff=(\d+),(\d+)$/.exec(location.hash);
    if (!m) { if (!overlay.hidden) closeDiff(); return Promise.resolve(); }
    var a = +m[1], b = +m[2], view = document.getElementById("diff-view");
    view.replaceChildren(el("p", { class: "muted" }, "Loading…"));
    overlay.hidden = false;
    document.body.classList.add("modal-open");
    return loadForDiff(a, b).then(function () { if (location.hash === m[0]) showDiff(a, b); });
  }
  window.addEventListener("hashchange", function (e) {
    var old = e.oldURL.split("#")[1];
    if (old && !/^diff=/.test(old)) returnTo = "#" + old;
    openFromHash().catch(fail);
    openClusterFromHash().catch(fail);
  });
  document.getElementById("diff-close").onclick = closeDiff;
  overlay.addEventListener("click", function (e) { if (e.target === overlay) closeDiff(); });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape" && !overlay.hidden) closeDiff(); });

  // `report.html#cluster=N` opens cluster N's members (a link to share).
  function openClusterFromHash() {
    var m = /^#cluster=(\d+)$/.exec(location.hash);
    var pos = m ? clusterPos(+m[1]) : null;
    if (!(pos >= 0 && pos < CT.rows)) return Promise.resolve();
    return ensureCluster(pos).then(function (c) {
      open[c[0]] = true;
      return clusterTable.reveal(pos);
    }).then(function (shown) {
      var row = shown && document.querySelector('#clusters tr[data-cluster="' + m[1] + '"]');
      var header = document.querySelector("header").offsetHeight;
      var box = row && row.getBoundingClientRect();
      if (box && (box.top < header || box.bottom > window.innerHeight)) row.scrollIntoView({ block: "start" });
    });
  }

  Promise.all(tables.filter(Boolean).map(function (t) { return t.ready; }).concat([openFromHash(), openClusterFromHash()]))
    .then(function () {
      document.body.setAttribute("data-ready", "1");
      // When the first screen was ready, for scripts/bench-report.sh.
      performance.mark("webdup-ready");
    }, fail);
})();
