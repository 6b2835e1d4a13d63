/* Plotly's script loaded while the reader looks at a page without figures (issue 23), once.
 *
 * Dash loads plotly.js (3.5 MB) only when a page first shows a graph, and evaluating it holds the browser's main
 * thread: the Descriptive page opened from the landing page (Model & data, no graph) took 2.3-2.7 s in headless
 * Chromium, 1.7 s of it two long tasks (Plotly's evaluation and its first drawings) after every answer had
 * arrived. Once the page has been quiet for a moment (its layout drawn, no component loading, no plotly.js script
 * in the document), this loads the script dash-core-components would (window._dashPlotlyJSURL, set by Dash's
 * renderer), so window.Plotly is there when a graph asks for it.
 *
 * One load, never two: dash-core-components' graph loads plotly.js itself unless window.Plotly is set
 * (`Promise.resolve(window.Plotly || new Promise(...append a script...))`). While this script is in flight,
 * window.Plotly is a thenable that settles when it has loaded, so a graph that mounts meanwhile (the reader
 * clicked on) waits for this load instead of starting a second: Promise.resolve adopts a thenable's outcome. The
 * script, when it runs, replaces the thenable with Plotly itself (its UMD wrapper assigns window.Plotly); if it
 * fails to load, the thenable is removed and rejects, as the graph's own load would. A page that shows a graph
 * first loads plotly.js itself: nothing is done then. */
(function () {
    "use strict";
    var quiet = 0;
    var started = false;
    var PLOTLY_SCRIPT = 'script[src*="plotly.min.js"]';

    function load() {
        if (started || window.Plotly || !window._dashPlotlyJSURL || document.querySelector(PLOTLY_SCRIPT)) {
            return;
        }
        started = true;
        var done;
        var loaded = new Promise(function (resolve, reject) {
            done = {resolve: resolve, reject: reject};
        });
        var pending = {
            then: function (onLoaded, onFailed) {
                return loaded.then(function () { return window.Plotly; }).then(onLoaded, onFailed);
            }
        };
        var script = document.createElement("script");
        script.src = window._dashPlotlyJSURL;
        script.async = true;
        script.setAttribute("data-candor-prefetch", "plotly");
        script.onload = function () {
            if (window.Plotly === pending) {  /* the script ran but did not define Plotly */
                delete window.Plotly;
                done.reject(new Error("plotly.js loaded but did not define window.Plotly"));
            } else {
                done.resolve();
            }
        };
        script.onerror = function () {
            if (window.Plotly === pending) {
                delete window.Plotly;
            }
            done.reject(new Error("plotly.js did not load"));
        };
        window.Plotly = pending;
        document.body.appendChild(script);
    }

    var timer = setInterval(function () {
        if (started || window.Plotly) {
            clearInterval(timer);
            return;
        }
        var busy = !document.getElementById("_pages_content")
            || document.querySelector('[data-dash-is-loading="true"]')
            || document.querySelector(PLOTLY_SCRIPT);  /* a graph's own load under way */
        quiet = busy ? 0 : quiet + 1;
        if (quiet >= 2) {
            clearInterval(timer);
            (window.requestIdleCallback || window.setTimeout)(load);
        }
    }, 150);
}());
