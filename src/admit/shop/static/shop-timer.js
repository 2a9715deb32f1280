// The cart's countdown: every element with data-expires (an ISO time) shows the minutes and
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
