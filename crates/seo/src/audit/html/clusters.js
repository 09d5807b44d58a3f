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

