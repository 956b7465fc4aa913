"""The inline script of report.html that makes its tables sortable (kept as a string so
the page needs no file but itself)."""

SORT_SCRIPT = r"""
// Sortable report tables: click a header to sort by that column (again to reverse).
// Numbers sort numerically ("1,230", "29.9 ± 0.4", "1.23e-05"); n/a stays last.
// ?sort=HEADER[&order=desc] in the address sorts every table with that header on load.
(function () {
  function numberOf(text) {
    var t = text.replace(/,/g, "").trim();
    var m = t.match(/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?/i);
    if (m) return parseFloat(m[0]);
    if (t === "inf") return Infinity;
    return null;
  }
  function sortTable(table, col, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].textContent, y = b.cells[col].textContent;
      var nx = numberOf(x), ny = numberOf(y), order;
      if (nx !== null && ny !== null) order = nx - ny;
      else if (nx !== null) return -1;
      else if (ny !== null) return 1;
      else order = x.localeCompare(y);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === col) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.addEventListener("click", function () {
        sortTable(table, col, th.getAttribute("aria-sort") === "ascending");
      });
    });
  });
  var query = new URLSearchParams(window.location.search);
  var wanted = query.get("sort");
  if (wanted) {
    Array.prototype.forEach.call(tables, function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
        if (th.textContent.trim() === wanted) sortTable(table, col, query.get("order") === "desc");
      });
    });
  }
})();
"""
