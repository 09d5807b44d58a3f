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

