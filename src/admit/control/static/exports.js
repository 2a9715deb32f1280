// The export's progress page follows the job without reloading: every second it asks the
// job's JSON (…/status) and moves the progress bar; once the job has ended the page is loaded
// again, which then shows the download (or why it failed). Without JavaScript the page
// refreshes itself every two seconds instead (<noscript> meta refresh).
(function () {
  "use strict";
  var box = document.getElementById("export-job");
  if (!box || !window.fetch) return;
  var url = box.getAttribute("data-status-url");
  var bar = document.getElementById("export-progress");
  var state = document.getElementById("export-state");
  function poll() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok) throw new Error(String(response.status));
        return response.json();
      })
      .then(function (job) {
        if (job.status !== "waiting" && job.status !== "running") {
          window.location.reload();
          return;
        }
        if (bar) bar.value = job.percentage;
        if (state) state.textContent = job.percentage + " % done.";
        window.setTimeout(poll, 1000);
      })
      .catch(function () {
        if (state) state.textContent = "Could not ask for the progress; reload the page to try again.";
      });
  }
  window.setTimeout(poll, 500);
})();
