// Kenning graph view: the as-of slider, and pan/zoom of the SVG. The page works without it
// (the date inputs and the node links are plain HTML).
(function () {
  "use strict";
  var range = document.getElementById("asof");
  if (range) {
    var stops = JSON.parse(range.getAttribute("data-stops") || "[]");
    var input = document.getElementById("as_of"), label = document.getElementById("asof-label");
    var day = function () {
      var i = parseInt(range.value, 10);
      return i >= stops.length ? "" : stops[i];
    };
    range.addEventListener("input", function () {
      var d = day();
      if (label) label.textContent = d || "now";
      range.setAttribute("aria-valuetext", d || "now");
    });
    range.addEventListener("change", function () {
      if (input) input.value = day();
      range.form.submit();
    });
  }
  var svg = document.getElementById("graph");
  if (!svg) return;
  var box = svg.getAttribute("viewBox").split(/\s+/).map(Number), home = box.slice();
  var set = function () { svg.setAttribute("viewBox", box.join(" ")); };
  svg.addEventListener("wheel", function (e) {
    e.preventDefault();
    var r = svg.getBoundingClientRect(), k = e.deltaY > 0 ? 1.15 : 1 / 1.15;
    var fx = (e.clientX - r.left) / r.width, fy = (e.clientY - r.top) / r.height;
    var w = box[2] * k, h = box[3] * k;
    box = [box[0] + (box[2] - w) * fx, box[1] + (box[3] - h) * fy, w, h];
    set();
  }, {passive: false});
  var drag = null;
  svg.addEventListener("pointerdown", function (e) {
    if (e.target.closest("a")) return;
    drag = {x: e.clientX, y: e.clientY, box: box.slice()};
    svg.setPointerCapture(e.pointerId);
    svg.classList.add("dragging");
  });
  svg.addEventListener("pointermove", function (e) {
    if (!drag) return;
    var r = svg.getBoundingClientRect();
    box[0] = drag.box[0] - (e.clientX - drag.x) * box[2] / r.width;
    box[1] = drag.box[1] - (e.clientY - drag.y) * box[3] / r.height;
    set();
  });
  var end = function () { drag = null; svg.classList.remove("dragging"); };
  svg.addEventListener("pointerup", end);
  svg.addEventListener("pointercancel", end);
  svg.addEventListener("dblclick", function (e) {
    if (e.target.closest("a")) return;
    box = home.slice(); set();
  });
})();
