/* Row changes without a server round trip (issue 14): the "Random row" pick and the navbar's row status.
 * Dash calls rowStatus and tableRow as clientside callbacks (app/callbacks/shell.py, ClientsideFunction
 * namespace "candor"); "Random row" is a click listener below. */
window.dash_clientside = Object.assign({}, window.dash_clientside);
window.dash_clientside.candor = Object.assign({}, window.dash_clientside.candor, {
    /* A held-out row chosen by a seeded generator (mulberry32, seed = the click count of this page load): the
     * same click count picks the same row for everyone, and a pick never repeats the row shown (when there is
     * another). */
    randomRow: function (nClicks, pool, current) {
        const rows = (pool && pool.rows) || [];
        if (!nClicks || rows.length === 0) {
            return window.dash_clientside.no_update;
        }
        let a = (nClicks * 2654435761) >>> 0;
        const next = function () {
            a = (a + 0x6D2B79F5) >>> 0;
            let t = a;
            t = Math.imul(t ^ (t >>> 15), t | 1);
            t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
            return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
        };
        let row = rows[Math.floor(next() * rows.length)];
        if (row === current && rows.length > 1) {
            row = rows[(rows.indexOf(row) + 1) % rows.length];
        }
        return row;
    },
    /* The navbar's one-line status of the chosen row: the page's own row callback sends it with its panels
     * ({row, text} in the page's row-status store), so a row change costs one request, not two. */
    rowStatus: function (sent, row, max) {
        if (!Number.isInteger(row)) {  // null, or NaN (what the number box holds outside its min/max)
            return "enter a whole row number from 0 to " + max;
        }
        const mine = (sent || []).find(s => s && s.row === row);
        return mine ? mine.text : "";
    },
    /* A click in the data table chooses that row (its id, the table's row numbering). */
    tableRow: function (cell) {
        if (!cell || cell.row_id === null || cell.row_id === undefined) {
            return window.dash_clientside.no_update;
        }
        return Number(cell.row_id);
    }
});

/* "Random row": a click (or Enter/Space on the button) sets the row box's value directly (dash_clientside.set_props),
 * which starts the page's one row request. As a clientside callback on the button's n_clicks, the pick cost Dash
 * a callback cycle before that request: 10-15 ms of each click in Chromium. */
(function () {
    let clicks = 0;
    document.addEventListener("click", function (event) {
        const button = event.target && event.target.closest && event.target.closest("#row-random");
        const api = window.dash_component_api, cs = window.dash_clientside;
        if (!button || button.disabled || !api || !api.getLayout || !cs || !cs.set_props) {
            return;
        }
        const pool = api.getLayout("row-pool"), box = api.getLayout("row-input");
        clicks += 1;
        const row = cs.candor.randomRow(clicks, pool && pool.props.data, box && box.props.value);
        if (row !== cs.no_update) {
            cs.set_props("row-input", {value: row});
        }
    }, true);
})();
