// Kenning web view: keyboard navigation and small enhancements. Every view works without it.
(function () {
  "use strict";
  var KEYS = [["/", "focus search"], ["j / k", "next / previous item"], ["Enter", "open it"],
              ["g", "graph of this page"], ["Esc", "leave the search box"], ["?", "these keys"]];

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll(".nav-item"));
  }
  function select(list, i) {
    list.forEach(function (el) { el.classList.remove("selected"); });
    var el = list[i];
    if (!el) return;
    el.classList.add("selected");
    el.scrollIntoView({block: "nearest"});
    var link = el.matches("a") ? el : el.querySelector("a");
    if (link) link.focus({preventScroll: true});
  }
  function typing(e) {
    var t = e.target;
    return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  }
  function toggleKeys() {
    var box = document.getElementById("keys");
    if (!box) {
      box = document.createElement("div");
      box.id = "keys";
      box.setAttribute("role", "dialog");
      box.setAttribute("aria-label", "Keyboard shortcuts");
      var dl = document.createElement("dl");
      KEYS.forEach(function (k) {
        var dt = document.createElement("dt"), dd = document.createElement("dd");
        dt.textContent = k[0]; dd.textContent = k[1];
        dl.appendChild(dt); dl.appendChild(dd);
      });
      box.appendChild(dl);
      box.hidden = true;
      document.body.appendChild(box);
    }
    box.hidden = !box.hidden;
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "Escape" && typing(e)) { e.target.blur(); return; }
    if (typing(e)) return;
    var list = items(), at = list.findIndex(function (el) { return el.classList.contains("selected"); });
    if (e.key === "/") { e.preventDefault(); var q = document.getElementById("q"); q.focus(); q.select(); }
    else if (e.key === "j" || e.key === "ArrowDown" && list.length && at >= 0) {
      e.preventDefault(); select(list, Math.min(at + 1, list.length - 1)); }
    else if (e.key === "k" || e.key === "ArrowUp" && list.length && at >= 0) {
      e.preventDefault(); select(list, Math.max(at - 1, 0)); }
    else if (e.key === "Enter" && at >= 0) {
      var el = list[at], link = el.matches("a") ? el : el.querySelector("a");
      if (link) { e.preventDefault(); link.click(); } }
    else if (e.key === "g") {
      var g = document.querySelector("a[data-key=graph]"); if (g) { e.preventDefault(); g.click(); } }
    else if (e.key === "?") { e.preventDefault(); toggleKeys(); }
  });
  // Auto-submitting controls (filters, the as-of slider) carry data-submit.
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t && t.hasAttribute && t.hasAttribute("data-submit") && t.form) t.form.submit();
  });
  // A cited range: scroll its first line into view once the page is laid out.
  window.addEventListener("load", function () {
    var first = document.querySelector(".body .hl");
    if (first) first.scrollIntoView({block: "center"});
  });
})();
