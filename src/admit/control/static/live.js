// The dashboard refreshes its numbers without a reload: every 30 seconds while the tab is
// visible, the page is fetched again and the part marked data-refresh is swapped for the new
// one. Without JavaScript the page is the same, only not refreshed.
(function () {
  "use strict";
  var board = document.querySelector("[data-refresh]");
  if (!board || !window.fetch || !window.DOMParser) return;
  var seconds = parseInt(board.getAttribute("data-refresh"), 10) || 30;
  var stamp = document.getElementById("refreshed");
  function refresh() {
    if (document.hidden) return;
    fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok || response.redirected) throw new Error(String(response.status));
        return response.text();
      })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-refresh]");
        if (!fresh) return;
        var open = Array.prototype.map.call(board.querySelectorAll("details[open]"), function (d) {
          return d.id;
        });
        board.innerHTML = fresh.innerHTML;
        open.forEach(function (id) {
          var again = id && document.getElementById(id);
          if (again) again.open = true;
        });
        if (stamp) stamp.textContent = "Updated " + new Date().toLocaleTimeString();
      })
      .catch(function () {
        if (stamp) stamp.textContent = "Could not update; the numbers shown may be old.";
      });
  }
  window.setInterval(refresh, seconds * 1000);
})();
