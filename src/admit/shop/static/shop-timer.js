// The shop's one script. The cart's countdown: every element with data-expires (an ISO time) shows the minutes and
// seconds left in its .countdown and, once the time is up, says so in its .expired-note (a
// live region, so a screen reader hears it once). Without this script the page still shows
// the reservation's end as a time of day.
(function () {
  "use strict";
  var timers = Array.prototype.slice.call(document.querySelectorAll("[data-expires]"));
  if (!timers.length) { return; }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function tick() {
    var now = Date.now();
    timers.forEach(function (el) {
      var end = Date.parse(el.getAttribute("data-expires"));
      var left = Math.max(0, Math.floor((end - now) / 1000));
      var out = el.querySelector(".countdown");
      if (out) {
        out.textContent = Math.floor(left / 60) + ":" + pad(left % 60) + " " + (el.getAttribute("data-left") || "left");
      }
      if (left === 0 && !el.classList.contains("ran-out")) {
        el.classList.add("ran-out");
        var note = el.querySelector(".expired-note");
        if (note) { note.textContent = el.getAttribute("data-ran-out") || ""; note.hidden = false; }
      }
    });
  }
  tick();
  window.setInterval(tick, 1000);
})();

// Questions that depend on another question's answer (data-dep-field, data-dep-values: the
// values that show them) are hidden unless that question, itself shown, has one of the values;
// a shown required one gets its required attribute back. The server decides the same way, so
// without this script every question shows and the hidden ones' answers are left out.
(function () {
  "use strict";
  var deps = Array.prototype.slice.call(document.querySelectorAll("[data-dep-field]"));
  if (!deps.length) { return; }
  function shown(el) {
    var box = el.closest(".question");
    return !box || !box.hidden;
  }
  function values(form, name) {
    var found = [];
    Array.prototype.forEach.call(form.elements, function (input) {
      if (input.name !== name || !shown(input)) { return; }
      if (input.type === "checkbox" || input.type === "radio") {
        if (input.checked) { found.push(input.value); }
        else if (input.type === "checkbox" && input.value === "True") { found.push("False"); }
      } else if (input.value) {
        found.push(input.value);
      }
    });
    return found;
  }
  function update() {
    deps.forEach(function (box) {
      var form = box.closest("form");
      var wanted = (box.getAttribute("data-dep-values") || "").split(" ");
      var show = !!form && values(form, box.getAttribute("data-dep-field")).some(function (v) {
        return wanted.indexOf(v) >= 0;
      });
      box.hidden = !show;
      if (box.getAttribute("data-required")) {
        Array.prototype.forEach.call(box.querySelectorAll("input, select, textarea"), function (input) {
          if (input.type !== "checkbox" && input.type !== "hidden" && !input.hasAttribute("data-kept")) { input.required = show; }
        });
      }
    });
  }
  update();
  update();  // a chain of dependencies settles in document order
  document.addEventListener("change", update);
})();

// The checkout's total follows the payment method chosen: each method's radio carries the
// total with its fee (data-total). Without this script the total shows the method checked
// when the page was drawn, and every method names its own fee and total.
(function () {
  "use strict";
  var out = document.getElementById("total-amount");
  if (!out) { return; }
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (input && input.name === "payment" && input.checked && input.getAttribute("data-total")) {
      out.textContent = input.getAttribute("data-total");
    }
  });
})();
