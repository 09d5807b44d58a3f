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

