/* Candor: accessible names and keyboard order for parts Dash draws without them (WCAG 2.1 AA, axe-core).
 *
 * Dash 4 and dash-table take no aria props, so this file names their inner controls from the visible
 * <label for="ID"> of the component (the page puts one beside each control), and gives every figure a
 * text alternative (role="figure", aria-label = its title and the summary a figure builder puts in
 * layout.meta.alt). It changes attributes only, never the content React or Plotly own, and runs again
 * whenever the page changes (a MutationObserver, once per animation frame).
 */
(function () {
  "use strict";
  function labelText(id) {
    if (!id) return "";
    var lab = document.querySelector('label[for="' + CSS.escape(id) + '"]');
    return lab ? lab.textContent.trim() : "";
  }
  function nameOf(el, fallback) {  // the visible label of the nearest component with an id
    for (var n = el; n && n !== document.body; n = n.parentElement) {
      var t = labelText(n.id) || (n.id && n.getAttribute("data-a11y-label"));
      if (t) return t;
    }
    return fallback;
  }
  function setIf(el, attr, value) { if (value && el.getAttribute(attr) !== value) el.setAttribute(attr, value); }

  function dropdowns(root) {
    // Dash 4 tabs to an aria-hidden proxy input that forwards focus to the button: make the button itself
    // the tab stop and the proxy inert (axe: aria-hidden-focus); name the button from its label.
    root.querySelectorAll(".dash-dropdown-focus-target").forEach(function (proxy) {
      if (!proxy.inert) proxy.inert = true;
      var button = proxy.nextElementSibling;
      if (button && button.tagName === "BUTTON") {
        if (!button.disabled && button.getAttribute("tabindex") !== "0") button.setAttribute("tabindex", "0");
        // its name: the label, then exactly the text it shows (axe: label-content-name-mismatch; Dash's own
        // aria-labelledby reads the count before the values and joins the values without spaces)
        var name = [labelText(button.id), button.textContent.replace(/\s+/g, " ").trim()].filter(Boolean).join(": ");
        if (button.hasAttribute("aria-labelledby")) button.removeAttribute("aria-labelledby");
        setIf(button, "aria-label", name);
      }
    });
  }
  function sliders(root) {
    root.querySelectorAll(".dash-slider-container").forEach(function (box) {
      var name = nameOf(box, "value");
      box.querySelectorAll('[role="slider"], .dash-slider-thumb').forEach(function (t) { setIf(t, "aria-label", name); });
      box.querySelectorAll("input").forEach(function (i) { setIf(i, "aria-label", name); });
    });
  }
  function uploads(root) {
    root.querySelectorAll('input[type="file"]').forEach(function (i) {
      if (i.id && labelText(i.id)) return;
      setIf(i, "aria-label", nameOf(i, (i.parentElement && i.parentElement.textContent.trim()) || "choose a file"));
    });
  }
  function progress(root) {
    root.querySelectorAll('[role="progressbar"]').forEach(function (bar) {
      if (bar.getAttribute("aria-label") || bar.getAttribute("aria-labelledby")) return;
      setIf(bar, "aria-label", nameOf(bar, "progress"));
    });
  }
  var PAGER = {"first-page": "first page", "previous-page": "previous page", "next-page": "next page",
               "last-page": "last page"};
  function tables(root) {
    Object.keys(PAGER).forEach(function (cls) {
      root.querySelectorAll("button." + cls).forEach(function (b) { setIf(b, "aria-label", PAGER[cls]); });
    });
    root.querySelectorAll(".previous-next-container input").forEach(function (i) { setIf(i, "aria-label", "page number"); });
  }
  function plain(html) {
    var d = document.createElement("div");
    d.innerHTML = String(html || "").replace(/<br\s*\/?>/gi, ". ");
    return d.textContent.replace(/\s+/g, " ").trim();
  }
  function figures(root) {
    root.querySelectorAll(".js-plotly-plot").forEach(function (gd) {
      var host = gd.closest(".dash-graph") || gd.parentElement || gd;
      var lay = gd.layout || {};
      var title = plain(lay.title && (lay.title.text || lay.title));
      var alt = plain(lay.meta && lay.meta.alt);
      var text = [title, alt].filter(Boolean).join(". ") || "figure";
      setIf(host, "role", "figure");
      setIf(host, "aria-label", text);
    });
  }
  function scrollers(root) {  // a panel that scrolls must take keyboard focus (axe: scrollable-region-focusable)
    root.querySelectorAll(".dropped-panel, .scroll-panel").forEach(function (p) {
      if (!p.hasAttribute("tabindex")) p.setAttribute("tabindex", "0");
    });
  }
  function fix() {
    var root = document;
    if (!document.documentElement.lang) document.documentElement.lang = "en";
    dropdowns(root); sliders(root); uploads(root); progress(root); tables(root); figures(root); scrollers(root);
  }
  var queued = false;
  function schedule() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(function () { queued = false; fix(); });
  }
  function start() {
    fix();
    new MutationObserver(schedule).observe(document.body, {childList: true, subtree: true});
    document.addEventListener("plotly_afterplot", schedule, true);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
  window.candorA11y = fix;  // tests call it before they check
})();
