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
