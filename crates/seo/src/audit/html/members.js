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

