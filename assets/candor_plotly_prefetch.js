/* Plotly's script loaded while the reader looks at a page without figures (issue 23).
 *
 * Dash loads plotly.js (3.5 MB) only when a page first shows a graph, and evaluating it holds the browser's main
 * thread: the Descriptive page opened from the landing page (Model & data, no graph) took 2.3-2.7 s in headless
 * Chromium, 1.7 s of it two long tasks (Plotly's evaluation and its first drawings) after every answer had
 * arrived. Once the page has been quiet for a moment (its layout drawn, no component loading), this loads the
 * same script the same way dash-core-components would (window._dashPlotlyJSURL, set by Dash's renderer), so
 * window.Plotly is there when a graph asks for it. A page that shows a graph first loads it itself: nothing is
 * done then. */
(function () {
    "use strict";
    var quiet = 0;
    var started = false;

    function load() {
        if (started || window.Plotly || !window._dashPlotlyJSURL) {
            return;
        }
        started = true;
        var script = document.createElement("script");
        script.src = window._dashPlotlyJSURL;
        script.async = true;
        script.setAttribute("data-candor-prefetch", "plotly");
        document.body.appendChild(script);
    }

    var timer = setInterval(function () {
        if (started || window.Plotly) {
            clearInterval(timer);
            return;
        }
        var busy = !document.getElementById("_pages_content")
            || document.querySelector('[data-dash-is-loading="true"]')
            || document.querySelector('script[src*="plotly.min.js"]');  /* a graph's own load under way */
        quiet = busy ? 0 : quiet + 1;
        if (quiet >= 2) {
            clearInterval(timer);
            (window.requestIdleCallback || window.setTimeout)(load);
        }
    }, 150);
}());
