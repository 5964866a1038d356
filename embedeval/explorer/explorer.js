// embedeval explorer: draws the data Python wrote into #explorer-data. It computes nothing that
// a reader would quote (those numbers come from Python); it sorts, filters, bins and draws.
// State lives in the address's hash (#sort=map@r&order=asc&class=3&query=17), so a view can be
// shared or opened as it was.
(function () {
  "use strict";

  var errorBox = document.getElementById("errors");
  function report(message) {
    errorBox.hidden = false;
    errorBox.textContent += message + "\n";
  }
  window.addEventListener("error", function (event) { report("error: " + event.message); });

  var D = JSON.parse(document.getElementById("explorer-data").textContent);
  var app = document.getElementById("app");
  // The SVG namespace, read off an <svg> the HTML parser made, so that the page holds no address.
  var SVGNS = document.getElementById("svg-namespace").namespaceURI;
  var PAGE = 100; // query rows drawn at once ("show more" adds as many)

  // ---------- small helpers ----------
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "onclick" || key === "onchange" || key === "oninput") node[key] = attrs[key];
      else node.setAttribute(key, attrs[key]);
    });
    (children || []).forEach(function (child) {
      if (child !== null && child !== undefined) node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }
  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVGNS, tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  // Numbers with 4 decimals (or `digits`), and from 1e6 on with 10 significant digits (what
  // Python writes into the data is enough for either: embedeval/explorer/json_text.py).
  function fmt(value, digits) {
    if (value === null || value === undefined || (typeof value === "number" && isNaN(value))) return "\u2013";
    if (typeof value !== "number") return String(value);
    if (Math.abs(value) >= 1e6) return value.toPrecision(10);
    return value.toFixed(digits === undefined ? 4 : digits);
  }
  // Scroll a node into view when it is not (on a narrow screen the neighbours sit below the queries).
  function reveal(node) {
    var box = node.getBoundingClientRect();
    if (box.top < 0 || box.top > window.innerHeight - 80) node.scrollIntoView({ block: "start" });
  }
  // A note above a table's box that says it scrolls sideways, shown while the table is wider.
  function sideways(box) {
    var note = el("p", { class: "note sideways", text: "\u2194 this table scrolls sideways", hidden: "" });
    function check() { note.hidden = box.scrollWidth <= box.clientWidth + 1; }
    window.addEventListener("resize", check);
    setTimeout(check, 0);
    return el("div", {}, [note, box]);
  }
  function count(value) { return value === null || value === undefined ? "\u2013" : Number(value).toLocaleString("en"); }
  function section(title, id, children) {
    return el("section", { id: id }, [el("h2", { text: title })].concat(children));
  }
  // A part of the address that is not a valid escape (a lone "%") is read as it stands.
  function decode(text) {
    try { return decodeURIComponent(text); } catch (e) { return text; }
  }
  function readHash() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      if (!part) return;
      var i = part.indexOf("=");
      out[decode(i < 0 ? part : part.slice(0, i))] = i < 0 ? "" : decode(part.slice(i + 1));
    });
    return out;
  }
  var state = readHash();
  function saveState() {
    var parts = Object.keys(state).filter(function (k) { return state[k] !== "" && state[k] !== undefined && state[k] !== null; })
      .map(function (k) { return encodeURIComponent(k) + "=" + encodeURIComponent(state[k]); });
    history.replaceState(null, "", "#" + parts.join("&"));
  }
  function select(options, value, onchange, id) {
    var node = el("select", { id: id, onchange: function () { onchange(node.value); } },
      options.map(function (o) { return el("option", { value: o[0], text: o[1] }); }));
    node.value = value;
    return node;
  }
  // A table whose headers sort it (numbers as numbers); rows are arrays of cells {text, value, cls}.
  function sortableTable(columns, rows, id) {
    var order = { col: -1, dir: 1 };
    var body = el("tbody");
    var heads = columns.map(function (c, i) {
      return el("th", { class: "sortable" + (c.num ? " num" : ""), onclick: function () { sortBy(i); } }, [c.title]);
    });
    function draw() {
      body.textContent = "";
      rows.forEach(function (r) {
        body.appendChild(el("tr", {}, r.map(function (cell, i) {
          return el("td", { class: columns[i].num ? "num" : "" }, [cell.text]);
        })));
      });
    }
    function sortBy(i) {
      order.dir = order.col === i ? -order.dir : (columns[i].num ? -1 : 1);
      order.col = i;
      rows.sort(function (a, b) { return compare(a[i].value, b[i].value) * order.dir; });
      heads.forEach(function (h, j) { h.setAttribute("aria-sort", j === i ? (order.dir > 0 ? "ascending" : "descending") : "none"); });
      draw();
    }
    draw();
    var table = el("table", { id: id }, [el("thead", {}, [el("tr", {}, heads)]), body]);
    table.setRows = function (newRows) { rows = newRows; if (order.col >= 0) { order.dir = -order.dir; sortBy(order.col); } else draw(); };
    return table;
  }
  function compare(a, b) {
    var an = a === null || a === undefined || (typeof a === "number" && isNaN(a));
    var bn = b === null || b === undefined || (typeof b === "number" && isNaN(b));
    if (an || bn) return an === bn ? 0 : an ? 1 : -1; // missing values last
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // ---------- figures ----------
  function axes(root, box, xs, ys, xLabel, yLabel) {
    root.appendChild(svg("line", { class: "axis", x1: box.l, y1: box.b, x2: box.r, y2: box.b }));
    root.appendChild(svg("line", { class: "axis", x1: box.l, y1: box.t, x2: box.l, y2: box.b }));
    xs.ticks.forEach(function (t) {
      root.appendChild(svg("text", { x: xs.at(t), y: box.b + 14, "text-anchor": "middle" }, xs.label(t)));
    });
    ys.ticks.forEach(function (t) {
      root.appendChild(svg("line", { class: "axis", x1: box.l - 3, y1: ys.at(t), x2: box.l, y2: ys.at(t) }));
      root.appendChild(svg("text", { x: box.l - 6, y: ys.at(t) + 4, "text-anchor": "end" }, ys.label(t)));
    });
    root.appendChild(svg("text", { x: (box.l + box.r) / 2, y: box.b + 30, "text-anchor": "middle" }, xLabel));
    root.appendChild(svg("text", { x: 12, y: (box.t + box.b) / 2, "text-anchor": "middle",
      transform: "rotate(-90 12 " + (box.t + box.b) / 2 + ")" }, yLabel));
  }
  function scale(lo, hi, from, to, ticks, digits) {
    var span = hi - lo || 1;
    return { ticks: ticks, at: function (v) { return from + (v - lo) / span * (to - from); },
      label: function (v) { return digits === 0 ? String(Math.round(v)) : v.toFixed(digits); } };
  }
  function niceTicks(lo, hi, n) {
    var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n || 1)));
    [1, 2, 5, 10].some(function (m) { if ((hi - lo) / (step * m) <= n) { step *= m; return true; } return false; });
    var out = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(+t.toFixed(10));
    return out;
  }
  function curveFigure(curves) {
    var W = 560, H = 300, box = { l: 50, r: W - 12, t: 10, b: H - 40 };
    var ks = curves.k, root = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, id: "curves-svg", role: "img" });
    var xs = scale(ks[0], ks[ks.length - 1], box.l, box.r, niceTicks(ks[0], ks[ks.length - 1], 8).filter(Number.isInteger), 0);
    var ys = scale(0, 1, box.b, box.t, [0, 0.25, 0.5, 0.75, 1], 2);
    axes(root, box, xs, ys, "k", "mean over evaluated queries");
    var legend = el("div", { class: "legend" });
    Object.keys(curves.series).forEach(function (family, i) {
      var colour = "var(--c" + (i % 4) + ")";
      var points = curves.series[family].map(function (v, j) { return xs.at(ks[j]) + "," + ys.at(v); }).join(" ");
      root.appendChild(svg("polyline", { points: points, fill: "none", stroke: colour, "stroke-width": 2, "data-family": family }));
      legend.appendChild(el("span", {}, [el("span", { class: "swatch", style: "background:" + colour }), family + "@k"]));
    });
    return el("div", { class: "panel" }, [root, legend]);
  }
  // Whether a metric takes only the values 0 and 1 (precision@1): its histogram is two bars.
  function binary(values) {
    return values.every(function (v) { return v === null || v === 0 || v === 1; });
  }
  function histogram(values, id) {
    var W = 560, H = 260, box = { l: 50, r: W - 12, t: 10, b: H - 40 };
    var finite = values.filter(function (v) { return v !== null; });
    var root = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, id: id, role: "img" });
    if (!finite.length) return root;
    var lo = Math.min.apply(null, finite.slice(0, 1e5)), hi = lo;
    finite.forEach(function (v) { if (v < lo) lo = v; if (v > hi) hi = v; });
    if (hi === lo) { var pad = Math.max(Math.abs(lo) * 0.05, 0.025); lo -= pad; hi += pad; }  // one value: a bar at it
    var bins = 20, counts = new Array(bins).fill(0);
    finite.forEach(function (v) { counts[Math.min(bins - 1, Math.floor((v - lo) / (hi - lo) * bins))] += 1; });
    var top = Math.max.apply(null, counts);
    var xs = scale(lo, hi, box.l, box.r, niceTicks(lo, hi, 6), 2);
    var ys = scale(0, top, box.b, box.t, niceTicks(0, top, 5).filter(Number.isInteger), 0);
    axes(root, box, xs, ys, "value", "queries");
    counts.forEach(function (c, i) {
      var x0 = xs.at(lo + (hi - lo) * i / bins), x1 = xs.at(lo + (hi - lo) * (i + 1) / bins);
      var bar = svg("rect", { class: "bar", x: x0 + 0.5, y: ys.at(c), width: Math.max(0, x1 - x0 - 1), height: box.b - ys.at(c) });
      bar.appendChild(svg("title", {}, c + " queries in [" + (lo + (hi - lo) * i / bins).toFixed(3) + ", " + (lo + (hi - lo) * (i + 1) / bins).toFixed(3) + ")"));
      root.appendChild(bar);
    });
    return root;
  }

  // ---------- the result page ----------
  function summarySection() {
    var rows = D.summary.map(function (s) {
      var interval = s.low === null ? "\u2013" : "[" + fmt(s.low) + ", " + fmt(s.high) + "]";
      return el("tr", {}, [el("td", { text: s.metric }), el("td", { class: "num", text: fmt(s.value) }),
        el("td", { class: "num", text: interval }), el("td", { class: "num", text: fmt(s.macro) }),
        el("td", { class: "def", text: s.definition })]);
    });
    var levels = D.summary.filter(function (s) { return s.level; }).map(function (s) { return s.level; });
    var head = el("tr", {}, ["metric", "value", levels.length ? Math.round(levels[0] * 100) + "% interval" : "interval",
      "macro (per class)", "definition"].map(function (t, i) { return el("th", { class: i > 0 && i < 4 ? "num" : "", text: t }); }));
    var skipped = D.skipped.filter(function (s) { return s.count; }).map(function (s) {
      return el("li", { text: count(s.count) + " skipped: " + s.reason });
    });
    var conventions = Object.keys(D.conventions).map(function (k) { return el("li", {}, [el("b", { text: k + ": " }), D.conventions[k]]); });
    var config = Object.keys(D.config).map(function (k) { return el("li", {}, [el("b", { text: k + ": " }), String(D.config[k])]); });
    return section("Summary", "summary", [
      el("table", { id: "summary-table" }, [el("thead", {}, [head]), el("tbody", {}, rows)]),
      el("p", { class: "note", text: levels.length ? "" : "No intervals given (pass intervals=embedeval.stats.bootstrap(result), or use the command line)." }),
      el("p", { class: "lead", id: "counts", text: count(D.counts.n_queries) + " queries given, " + count(D.counts.n_evaluated) + " evaluated, " + count(D.counts.n_skipped) + " skipped" }),
      el("ul", { id: "skips" }, skipped),
      el("details", {}, [el("summary", { text: "conventions and settings" }), el("ul", {}, conventions.concat(config))]),
    ]);
  }
  function curvesSection() {
    if (!D.curves) return section("Metrics by k", "curves", [el("p", { class: "note", text: "No curves: evaluate with keep_neighbors=k to draw each metric for k = 1..k." })]);
    var defs = Object.keys(D.curves.definitions).map(function (f) { return el("li", { text: f + ": " + D.curves.definitions[f] }); });
    return section("Metrics by k", "curves", [curveFigure(D.curves),
      el("p", { class: "note", text: "Means over the " + count(D.curves.n) + " evaluated queries, from their kept neighbours." }),
      D.curves.ties ? el("p", { class: "note", id: "curve-ties", text: D.curves.ties }) : null,
      el("details", {}, [el("summary", { text: "definitions" }), el("ul", {}, defs)])]);
  }
  function distributionSection() {
    if (!D.metrics.length) return null;
    var holder = el("div", { class: "panel" });
    var metric = D.metrics.indexOf(state.hist) >= 0 ? state.hist : D.metrics.filter(function (m) { return !binary(D.queries.values[m]); })[0] || D.metrics[0];
    function draw(m) {
      state.hist = m; saveState();
      holder.textContent = "";
      holder.appendChild(histogram(D.queries.values[m], "histogram-svg"));
    }
    var chooser = select(D.metrics.map(function (m) { return [m, m]; }), metric, draw, "histogram-metric");
    draw(metric);
    return section("Distribution of per-query values", "distribution", [el("div", { class: "controls" }, [el("label", { text: "metric" }), chooser]), holder,
      el("p", { class: "note", text: "20 equal bins between the smallest and largest value (around it where all are equal); skipped queries are left out." })]);
  }
  function perClassSection() {
    if (!D.per_class) return null;
    var pc = D.per_class, metrics = Object.keys(pc.values);
    var columns = [{ title: "class" }, { title: "queries", num: true }].concat(metrics.map(function (m) { return { title: m, num: true }; }));
    var all = pc.labels.map(function (label, i) {
      return [{ text: label, value: pc.numeric ? +label : label }, { text: count(pc.counts[i]), value: pc.counts[i] }].concat(
        metrics.map(function (m) { return { text: fmt(pc.values[m][i]), value: pc.values[m][i] }; }));
    });
    var table = sortableTable(columns, all.slice(), "class-table");
    var filter = el("input", { id: "class-filter", placeholder: "filter classes", oninput: function () {
      var q = filter.value.toLowerCase();
      table.setRows(all.filter(function (r) { return r[0].text.toLowerCase().indexOf(q) >= 0; }));
    } });
    return section("Per class", "per-class", [el("div", { class: "controls" }, [filter,
      el("span", { class: "note", text: "click a column to sort" })]), sideways(el("div", { class: "scroll" }, [table]))]);
  }
  // Verification: the ROC (true accept rate against false match rate), the DET (both error rates,
  // log10 axes) and the distances of positive and negative pairs; every point from Python.
  function verificationSection() {
    var V = D.verification;
    if (!V) return null;
    var fmr = V.fmr, fnmr = V.fnmr;
    function linear(id, xLabel, yLabel, ys) {
      var W = 380, H = 300, box = { l: 50, r: W - 12, t: 10, b: H - 40 };
      var root = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, id: id, role: "img" });
      var xs = scale(0, 1, box.l, box.r, [0, 0.25, 0.5, 0.75, 1], 2), yv = scale(0, 1, box.b, box.t, [0, 0.25, 0.5, 0.75, 1], 2);
      axes(root, box, xs, yv, xLabel, yLabel);
      var points = [xs.at(0) + "," + yv.at(ys(0, 1))].concat(fmr.map(function (x, i) { return xs.at(x) + "," + yv.at(ys(x, fnmr[i])); }), [xs.at(1) + "," + yv.at(ys(1, 0))]);
      root.appendChild(svg("polyline", { points: points.join(" "), fill: "none", stroke: "var(--c0)", "stroke-width": 2 }));
      return root;
    }
    function logAxis(lo) { var t = []; for (var e = Math.floor(lo); e <= 0; e++) t.push(e); return t; }
    function det() {
      var W = 380, H = 300, box = { l: 50, r: W - 12, t: 10, b: H - 40 };
      var root = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, id: "det-svg", role: "img" });
      var tiny = Math.min(1 / V.n_negative, 1 / V.n_positive);
      var lo = Math.floor(Math.log10(tiny));
      var xs = scale(lo, 0, box.l, box.r, logAxis(lo), 0), ys = scale(lo, 0, box.b, box.t, logAxis(lo), 0);
      xs.label = ys.label = function (v) { return "1e" + v; };
      axes(root, box, xs, ys, "false match rate (log10)", "false non-match rate (log10)");
      var points = [];
      fmr.forEach(function (x, i) { if (x > 0 && fnmr[i] > 0) points.push(xs.at(Math.log10(x)) + "," + ys.at(Math.log10(fnmr[i]))); });
      root.appendChild(svg("polyline", { points: points.join(" "), fill: "none", stroke: "var(--c1)", "stroke-width": 2 }));
      return root;
    }
    function scores() {
      var W = 380, H = 300, box = { l: 50, r: W - 12, t: 10, b: H - 40 }, e = V.edges;
      var root = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, id: "pair-scores-svg", role: "img" });
      var share = function (c, n) { return c.map(function (v) { return v / n; }); };
      var pos = share(V.positive, V.n_positive), neg = share(V.negative, V.n_negative);
      var top = Math.max.apply(null, pos.concat(neg)) || 1;
      var xs = scale(e[0], e[e.length - 1], box.l, box.r, niceTicks(e[0], e[e.length - 1], 5), 2);
      var ys = scale(0, top, box.b, box.t, niceTicks(0, top, 4), 2);
      axes(root, box, xs, ys, "pair distance (" + V.distance + ")", "share of the pairs of its kind");
      [[pos, "var(--c2)", "positive"], [neg, "var(--c1)", "negative"]].forEach(function (kind) {
        kind[0].forEach(function (v, i) {
          var bar = svg("rect", { x: xs.at(e[i]), y: ys.at(v), width: Math.max(0.5, xs.at(e[i + 1]) - xs.at(e[i])), height: box.b - ys.at(v),
            fill: kind[1], opacity: 0.5, "data-kind": kind[2] });
          bar.appendChild(svg("title", {}, kind[2] + ": " + (100 * v).toFixed(2) + "% in [" + fmt(e[i]) + ", " + fmt(e[i + 1]) + ")"));
          root.appendChild(bar);
        });
      });
      return root;
    }
    var marks = Object.keys(V.marks).map(function (k) { return k + " = " + fmt(V.marks[k]); }).join(", ");
    return section("Verification: pairs of items", "verification", [
      el("div", { class: "grid" }, [
        el("div", { class: "panel" }, [linear("roc-svg", "false match rate", "true accept rate", function (x, y) { return 1 - y; }), el("p", { class: "note", text: "ROC" })]),
        el("div", { class: "panel" }, [det(), el("p", { class: "note", text: "DET" })]),
        el("div", { class: "panel" }, [scores(), el("p", { class: "legend" }, [el("span", {}, [el("span", { class: "swatch", style: "background:var(--c2)" }), "positive (same label)"]),
          el("span", {}, [el("span", { class: "swatch", style: "background:var(--c1)" }), "negative"])])])]),
      el("p", { class: "note", id: "verification-note", text: count(V.n_positive) + " positive and " + count(V.n_negative) + " negative pairs; " + marks +
        ". Each point accepts the pairs below one edge of the verification's exact histogram (65,536 bins over the distances): a point of the ROC itself; points closer than 0.2% to the last are left out." })]);
  }
  function confusionSection() {
    if (!D.confusions) return null;
    var rows = D.confusions.map(function (c) {
      return el("tr", {}, [el("td", { text: c.query_class }), el("td", { text: c.neighbour_class }),
        el("td", { class: "num", text: count(c.count) }), el("td", { class: "num", text: (100 * c.share).toFixed(1) + "%" })]);
    });
    var head = el("tr", {}, ["query class", "class of its top-1 neighbour", "queries", "share of the class"].map(function (t, i) {
      return el("th", { class: i > 1 ? "num" : "", text: t }); }));
    return section("Most confused classes", "confusions", [
      el("p", { class: "note", text: "Who takes the top 1 of whom: queries whose nearest neighbour has another label, by pair." }),
      rows.length ? el("div", { class: "scroll short" }, [el("table", { id: "confusion-table" }, [el("thead", {}, [head]), el("tbody", {}, rows)])]) : el("p", { text: "No query's top 1 has another label." })]);
  }

  function queryRows() {
    var n = D.counts.n_queries, out = new Array(n);
    for (var i = 0; i < n; i++) out[i] = i;
    return out;
  }
  function neighbourIndex() {
    var index = {};
    if (D.neighbours) D.neighbours.queries.forEach(function (q, i) { index[q] = i; });
    return index;
  }
  function querySection() {
    var Q = D.queries, metrics = D.metrics, nIndex = neighbourIndex();
    var partial = D.neighbours && D.neighbours.queries.length < D.counts.n_queries;  // some queries lack theirs
    if (!D.classes || !/^\d+$/.test(state.class || "") || +state.class >= D.classes.length) state.class = "";  // not a class
    var sortKey = metrics.indexOf(state.sort) >= 0 || state.sort === "first" ? state.sort : "query";
    var order = state.order === "desc" ? -1 : 1;
    var shown = PAGE;
    var body = el("tbody", { id: "query-rows" });
    var detail = el("div", { id: "query-detail", class: "panel" }, [el("p", { class: "note", text: "Click a query to see its neighbours." })]);
    var countLine = el("p", { class: "note", id: "query-count" });
    var more = el("button", { id: "more-rows", text: "show " + PAGE + " more", onclick: function () { shown += PAGE; draw(); } });
    function label(i) { return Q.labels && Q.labels[i] >= 0 ? D.classes[Q.labels[i]] : ""; }
    // The rank of the first relevant neighbour; past the kept ones, or none for a skipped query.
    function firstText(i) {
      if (!Q.first || (Q.skip && Q.skip[i] >= 0)) return "\u2013";
      return Q.first[i] ? String(Q.first[i]) : "beyond the " + count(D.neighbours ? D.neighbours.kept : 0) + " kept";
    }
    function value(i, key) {
      if (key === "query") return i;
      if (key === "first") return Q.first ? (Q.first[i] || null) : null;
      return Q.values[key][i];
    }
    function filtered() {
      var rows = queryRows();
      if (state.class !== undefined && state.class !== "" && Q.labels) {
        var code = +state.class;
        rows = rows.filter(function (i) { return Q.labels[i] === code; });
      }
      if (state.with === "1") rows = rows.filter(function (i) { return nIndex[i] !== undefined; });
      rows.sort(function (a, b) { return compare(value(a, sortKey), value(b, sortKey)) * order || a - b; });
      return rows;
    }
    var heads = [["query", "query"], ["label", null]].concat(metrics.map(function (m) { return [m, m]; }), [["first relevant", "first"], ["skipped", null]]);
    var headRow = el("tr", {}, heads.map(function (h) {
      var th = el("th", { class: (h[1] ? "sortable" : "") + (h[1] && h[1] !== "query" ? " num" : ""), "data-key": h[1] || "" }, [h[0]]);
      if (h[1]) th.onclick = function () {
        order = sortKey === h[1] ? -order : (h[1] === "query" ? 1 : 1);
        sortKey = h[1]; state.sort = sortKey; state.order = order > 0 ? "asc" : "desc"; saveState(); shown = PAGE; draw();
      };
      return th;
    }));
    function draw() {
      var rows = filtered();
      body.textContent = "";
      rows.slice(0, shown).forEach(function (i) {
        var skip = Q.skip && Q.skip[i] >= 0 ? D.skip_reasons[Q.skip[i]] : "";
        var name = Q.ids ? Q.ids[i] : String(i);
        var cells = [el("td", { class: "id", text: name + (D.neighbours && nIndex[i] === undefined ? "\u00a0\u00b7" : "") }), el("td", { text: label(i) })]
          .concat(metrics.map(function (m) { return el("td", { class: "num", text: fmt(Q.values[m][i]) }); }),
            [el("td", { class: "num", text: firstText(i) }), el("td", { class: "note", text: skip })]);
        var tr = el("tr", { class: "clickable" + (String(i) === state.query ? " selected" : ""), "data-query": i }, cells);
        tr.onclick = function () { state.query = String(i); saveState(); showQuery(i); draw(); reveal(detail); };
        body.appendChild(tr);
      });
      Array.prototype.forEach.call(headRow.children, function (th) {
        var key = th.getAttribute("data-key");
        th.setAttribute("aria-sort", key && key === sortKey ? (order > 0 ? "ascending" : "descending") : "none");
      });
      countLine.textContent = count(rows.length) + " queries match; showing " + count(Math.min(shown, rows.length)) + "." +
        (partial ? " Queries marked \u00b7 have no neighbours on this page." : "");
      more.hidden = shown >= rows.length;
    }
    function showQuery(i) {
      detail.textContent = "";
      var name = Q.ids ? Q.ids[i] : "#" + i;
      var head = [el("h3", { text: "Query " + name + (label(i) ? " (label " + label(i) + ")" : "") })];
      if (D.query_images && D.query_images[i] !== undefined) head.push(el("img", { class: "thumb", src: D.query_images[i], alt: "query " + name }));
      var values = metrics.map(function (m) { return m + " = " + fmt(Q.values[m][i]); }).join(", ");
      head.push(el("p", { class: "note", text: values }));
      head.forEach(function (n) { detail.appendChild(n); });
      var N = D.neighbours, at = nIndex[i];
      if (!N || at === undefined) {
        detail.appendChild(el("p", { class: "note", id: "no-neighbours", text: N ? "This query's neighbours are not on the page (" + D.rule + ")." : D.rule }));
        return;
      }
      var R = N.n_relevant[i];
      var first = Q.first ? Q.first[i] : 0;
      detail.appendChild(el("p", {}, ["R = " + R + " relevant; first relevant at rank ", el("b", { id: "first-relevant", text: first ? String(first) : "none in the top " + count(N.kept) })]));
      if (N.kept > N.k) detail.appendChild(el("p", { class: "note", text: "The first " + count(N.k) + " of the " + count(N.kept) + " kept neighbours are on the page." }));
      var rows = [];
      for (var r = 0; r < N.k; r++) {
        var j = at * N.k + r, id = N.ids[j];
        if (id < 0) break;
        var relevant = N.relevant[j] === 1;
        var cells = [el("td", { class: "num", text: String(r + 1) }), el("td", { text: N.names ? N.names[id] : String(id) })];
        if (N.labels) cells.push(el("td", { text: N.labels[j] >= 0 ? D.classes[N.labels[j]] : "" }));
        if (N.grades) cells.push(el("td", { class: "num", text: fmt(N.grades[j], 2) }));
        cells.push(el("td", { class: "num", text: fmt(N.distances[j]) }), el("td", { class: relevant ? "yes" : "no", text: relevant ? "relevant" : "not relevant" }));
        if (N.images) cells.push(el("td", {}, [N.images[id] !== undefined ? el("img", { class: "thumb", src: N.images[id], alt: "item " + id, loading: "lazy" }) : null]));
        rows.push(el("tr", { class: relevant ? "relevant" : "irrelevant" }, cells));
      }
      var titles = ["rank", "id"].concat(N.labels ? ["label"] : [], N.grades ? ["grade"] : [], ["distance", "relevant"], N.images ? ["image"] : []);
      detail.appendChild(el("table", { id: "neighbour-table" }, [el("thead", {}, [el("tr", {}, titles.map(function (t) { return el("th", { text: t }); }))]), el("tbody", {}, rows)]));
    }
    var controls = [el("label", { text: "class" })];
    if (Q.labels && D.classes) {
      controls.push(select([["", "all classes"]].concat(D.classes.map(function (c, i) { return [String(i), c]; })), state.class || "",
        function (v) { state.class = v; saveState(); shown = PAGE; draw(); }, "class-select"));
    } else controls = [];
    if (partial) {
      var box = el("input", { type: "checkbox", id: "with-neighbours", onchange: function () { state.with = box.checked ? "1" : ""; saveState(); shown = PAGE; draw(); } });
      box.checked = state.with === "1";
      controls.push(el("label", {}, [box, " only queries with neighbours on the page"]));
    }
    draw();
    if (state.query !== undefined && state.query !== "" && +state.query < D.counts.n_queries) showQuery(+state.query);
    return section("Queries", "queries", [el("div", { class: "controls" }, controls), countLine,
      el("p", { class: "note", id: "rule", text: D.rule }),
      el("div", { class: "split" }, [el("div", {}, [sideways(el("div", { class: "scroll" }, [el("table", { id: "query-table" }, [el("thead", {}, [headRow]), body])])), more]), detail])]);
  }

  // ---------- the comparison page ----------
  function systemsSection() {
    var head = el("tr", {}, [el("th", { text: "system" })].concat(D.metrics.map(function (m) { return el("th", { class: "num", text: m }); }),
      D.metrics.map(function (m) { return el("th", { class: "num", text: "rank (" + m + ")" }); })));
    var rows = D.systems.map(function (s) {
      var cells = [el("td", { text: s + (D.n_runs[s] > 1 ? " (" + D.n_runs[s] + " runs)" : "") })];
      D.metrics.forEach(function (m) {
        var iv = D.intervals ? D.intervals[s][m] : null;
        cells.push(el("td", { class: "num", text: fmt(D.values[s][m]) + (iv ? " [" + fmt(iv[0]) + ", " + fmt(iv[1]) + "]" : "") }));
      });
      D.metrics.forEach(function (m) {
        var r = D.ranks[m][s];
        cells.push(el("td", { class: "num", text: r.rank + (r.low !== null ? " (" + r.low + "\u2013" + r.high + ")" : "") }));
      });
      return el("tr", {}, cells);
    });
    return section("Systems", "systems", [sideways(el("div", { class: "scroll" }, [el("table", { id: "systems-table" }, [el("thead", {}, [head]), el("tbody", {}, rows)])])),
      el("p", { class: "note", text: count(D.n_queries) + " queries compared (evaluated by every system) of " + count(D.n_given) + " given. Rank 1 is the highest value; in brackets the interval and the range of ranks over bootstrap replicates." })]
      .concat(D.notes.map(function (n) { return el("p", { class: "note", text: n }); })));
  }
  // One row per pair and metric: every p-value the comparison holds (the one that decides
  // "significant" marked), and the legend that says how each was made, as the command line prints it.
  function pairsSection() {
    var P = D.p_columns;
    var columns = [{ title: "pair (B \u2212 A)" }, { title: "metric" }, { title: "difference [interval]", num: true }]
      .concat(P.map(function (c) { return { title: c[1] + (c[0] === D.decides ? " \u2020" : ""), num: true }; }),
        [{ title: "d_z", num: true }, { title: "W/T/L", num: true }, { title: "significant", num: true }]);
    var rows = D.pairs.map(function (p) {
      var interval = p.low === null ? "" : " [" + fmt(p.low) + ", " + fmt(p.high) + "]";
      return [{ text: p.b + " \u2212 " + p.a, value: p.b + "\u0000" + p.a }, { text: p.metric, value: p.metric },
        { text: fmt(p.difference) + interval, value: p.difference }]
        .concat(P.map(function (c) { return { text: p[c[0]] !== null && p[c[0]] < 1e-4 ? "<0.0001" : fmt(p[c[0]]), value: p[c[0]] }; }),
          [{ text: fmt(p.effect_size, 2), value: p.effect_size },
            { text: count(p.wins) + "/" + count(p.ties) + "/" + count(p.losses), value: p.wins - p.losses },
            { text: p.significant ? "yes" : "no", value: p.significant ? 1 : 0 }]);
    });
    var legend = Object.keys(D.legend || {}).map(function (k) { return el("li", {}, [el("b", { text: k + ": " }), D.legend[k]]); });
    var decider = P.filter(function (c) { return c[0] === D.decides; })[0];
    return section("Pairs", "pairs", [sideways(el("div", { class: "scroll" }, [sortableTable(columns, rows, "pairs-table")])),
      el("p", { class: "note", id: "significance-rule", text: "\u2020 decides \u201csignificant\u201d: " + decider[1] + " < " + D.settings.alpha +
        ". W/T/L: queries where B is above / equal to / below A." }),
      legend.length ? el("details", {}, [el("summary", { text: "how each number was made" }), el("ul", { id: "pairs-legend" }, legend)]) : null]);
  }
  function scatterSection() {
    var Q = D.queries;
    if (!Q) return section("Per query", "scatter", [el("p", { class: "note", text: "This comparison holds no per-query values." })]);
    var pairs = [];  // each pair's key: the JSON text of [A, B] (any system name, NUL included)
    D.pairs.forEach(function (p) { var key = JSON.stringify([p.a, p.b]); if (pairs.indexOf(key) < 0) pairs.push(key); });
    var pair = pairs.indexOf(state.pair) >= 0 ? state.pair : pairs[0];
    var metric = D.metrics.indexOf(state.metric) >= 0 ? state.metric : D.metrics[0];
    var holder = el("div", { class: "panel" }), list = el("div");
    function draw() {
      state.pair = pair; state.metric = metric; saveState();
      var ab = JSON.parse(pair), a = Q.values[ab[0]][metric], b = Q.values[ab[1]][metric];
      holder.textContent = ""; list.textContent = "";
      holder.appendChild(scatter(a, b, ab[0], ab[1], metric));
      var order = a.map(function (_, i) { return i; }).sort(function (i, j) { return Math.abs(b[j] - a[j]) - Math.abs(b[i] - a[i]) || i - j; }).slice(0, 20);
      var rows = order.map(function (i) {
        var name = Q.ids ? Q.ids[i] : String(Q.positions ? Q.positions[i] : i);
        return el("tr", {}, [el("td", { text: name }), el("td", { class: "num", text: fmt(a[i]) }), el("td", { class: "num", text: fmt(b[i]) }), el("td", { class: "num", text: fmt(b[i] - a[i]) })]);
      });
      list.appendChild(el("table", { id: "differences-table" }, [el("thead", {}, [el("tr", {}, ["query", ab[0], ab[1], "B \u2212 A"].map(function (t, i) { return el("th", { class: i ? "num" : "", text: t }); }))]), el("tbody", {}, rows)]));
    }
    var pairChooser = select(pairs.map(function (k) { var ab = JSON.parse(k); return [k, "A = " + ab[0] + ", B = " + ab[1]]; }), pair, function (v) { pair = v; draw(); }, "pair-select");
    var metricChooser = select(D.metrics.map(function (m) { return [m, m]; }), metric, function (v) { metric = v; draw(); }, "metric-select");
    draw();
    return section("Per query", "scatter", [el("div", { class: "controls" }, [pairChooser, metricChooser]), el("div", { class: "grid" }, [holder,
      el("div", {}, [el("h3", { text: "Largest differences" }), list])]),
      el("p", { class: "note", text: "Each point is a query (points at the same place, to 0.01, are drawn once, sized by their count); above the diagonal B is higher." })]);
  }
  function scatter(a, b, nameA, nameB, metric) {
    var W = 460, H = 420, box = { l: 50, r: W - 12, t: 10, b: H - 40 };
    var lo = Infinity, hi = -Infinity;
    a.concat(b).forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    if (hi === lo) hi = lo + 1;
    var xs = scale(lo, hi, box.l, box.r, niceTicks(lo, hi, 5), 2), ys = scale(lo, hi, box.b, box.t, niceTicks(lo, hi, 5), 2);
    var root = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, id: "scatter-svg", role: "img" });
    axes(root, box, xs, ys, nameA + " (" + metric + ")", nameB);
    root.appendChild(svg("line", { class: "diag", x1: xs.at(lo), y1: ys.at(lo), x2: xs.at(hi), y2: ys.at(hi) }));
    var cells = {};
    a.forEach(function (x, i) {
      var key = Math.round((x - lo) / (hi - lo) * 100) + "," + Math.round((b[i] - lo) / (hi - lo) * 100);
      cells[key] = (cells[key] || 0) + 1;
    });
    var top = Math.max.apply(null, Object.keys(cells).map(function (k) { return cells[k]; }));
    Object.keys(cells).forEach(function (key) {
      var xy = key.split(","), x = lo + (hi - lo) * xy[0] / 100, y = lo + (hi - lo) * xy[1] / 100;
      var dot = svg("circle", { class: "dot", cx: xs.at(x), cy: ys.at(y), r: 2 + 10 * Math.sqrt(cells[key] / top) });
      dot.appendChild(svg("title", {}, cells[key] + " queries near (" + x.toFixed(2) + ", " + y.toFixed(2) + ")"));
      root.appendChild(dot);
    });
    return root;
  }

  function main() {
    app.textContent = "";
    app.appendChild(el("h1", { text: D.title }));
    var parts;
    if (D.kind === "comparison") {
      app.appendChild(el("p", { class: "lead", text: D.systems.length + " systems, " + D.metrics.length + " metrics, " + count(D.n_queries) + " queries" }));
      parts = [systemsSection(), pairsSection(), scatterSection()];
    } else {
      var figures = el("div", { class: "grid" }, [curvesSection(), distributionSection()].filter(Boolean));
      parts = [summarySection(), figures, verificationSection(), querySection(), perClassSection(), confusionSection()];
    }
    parts.forEach(function (p) { if (p) app.appendChild(p); });
    document.body.setAttribute("data-ready", "1");
  }
  try { main(); } catch (e) { report("error: " + e.message); throw e; }
})();
