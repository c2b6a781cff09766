// fencelab verify --html: filters, theme and the cell panel. Everything is in
// the page already; this only shows and hides it.
(function () {
  "use strict";
  var body = document.body;
  var root = document.documentElement;
  var data = JSON.parse(document.getElementById("cells").textContent);

  // Light or dark: the system's, or the one chosen (#dark, #light, the button).
  function theme(name) {
    if (name) { root.setAttribute("data-theme", name); } else { root.removeAttribute("data-theme"); }
  }
  if (location.hash === "#dark" || location.hash === "#light") { theme(location.hash.slice(1)); }
  document.getElementById("theme").addEventListener("click", function () {
    var dark = root.getAttribute("data-theme") === "dark" ||
      (!root.getAttribute("data-theme") && matchMedia("(prefers-color-scheme: dark)").matches);
    theme(dark ? "light" : "dark");
  });

  // Step filters: one class on <body> per hidden step and kind.
  function colspans() {
    document.querySelectorAll("th.step-head").forEach(function (th) {
      var step = th.getAttribute("data-ms");
      var shown = 0;
      document.querySelectorAll('th.mut[data-ms="' + step + '"]').forEach(function (m) {
        if (getComputedStyle(m).display !== "none") { shown += 1; }
      });
      th.colSpan = Math.max(shown, 1);
      th.hidden = shown === 0;
    });
  }
  document.querySelectorAll("input[data-filter]").forEach(function (box) {
    box.addEventListener("change", function () {
      body.classList.toggle("hide-" + box.getAttribute("data-filter") + "-" + box.value, !box.checked);
      colspans();
    });
  });
  var problems = document.getElementById("only-problems");
  var ok = {};
  document.querySelectorAll("th.mut").forEach(function (th, i) { ok[i] = th.getAttribute("data-ok") === "true"; });
  problems.addEventListener("change", function () {
    body.classList.toggle("only-problems", problems.checked);
    document.querySelectorAll("td[data-m]").forEach(function (td) {
      td.hidden = problems.checked && ok[td.getAttribute("data-m")];
    });
    colspans();
  });

  // Test names: rows whose name does not contain the text are hidden.
  var search = document.getElementById("search");
  search.addEventListener("input", function () {
    var text = search.value.toLowerCase();
    document.querySelectorAll("tr[data-test]").forEach(function (tr) {
      tr.hidden = text !== "" && tr.getAttribute("data-test").toLowerCase().indexOf(text) < 0;
    });
  });

  // A cell's full observation in the panel.
  var panel = document.getElementById("panel");
  var selected = null;
  document.querySelector("table.matrix tbody").addEventListener("click", function (event) {
    var td = event.target.closest("td[data-m]");
    if (!td) { return; }
    if (selected) { selected.classList.remove("selected"); }
    selected = td;
    td.classList.add("selected");
    var mutant = data.mutants[Number(td.getAttribute("data-m"))];
    var test = td.parentElement.getAttribute("data-test");
    var message = data.messages[td.getAttribute("data-m") + " " + test];
    panel.textContent = "";
    panel.hidden = false;
    var close = document.createElement("button");
    close.type = "button";
    close.className = "close";
    close.setAttribute("aria-label", "close");
    close.textContent = "×";
    close.addEventListener("click", function () {
      panel.hidden = true;
      if (selected) { selected.classList.remove("selected"); selected = null; }
    });
    panel.appendChild(close);
    var head = document.createElement("p");
    var link = document.createElement("a");
    link.href = "#m-" + mutant;
    link.textContent = mutant;
    head.appendChild(link);
    head.appendChild(document.createTextNode(" × " + test + ": " + td.title.split("\n")[0].split(": ").slice(1).join(": ")));
    panel.appendChild(head);
    if (message) {
      var pre = document.createElement("pre");
      pre.className = "message";
      pre.textContent = message;
      panel.appendChild(pre);
    }
  });
})();
