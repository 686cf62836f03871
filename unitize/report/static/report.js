/* unitize report: a static page over data/*.js files (no server, no network). */
(function () {
  "use strict";
  var R = { overview: null, docs: new Map(), items: new Map(), waiting: {}, order: [] };
  var PAGE = 25, CACHE = 40;
  window.unitizeReport = R;

  /* ---------- loading: <script> injection works from file URLs, fetch does not ---------- */
  R.load = function (kind, index, payload) {
    if (kind === "overview") { R.overview = payload; start(); return; }
    var key = kind + ":" + index, store = kind === "doc" ? R.docs : R.items;
    store.set(index, payload);
    if (store.size > CACHE) store.delete(store.keys().next().value);
    (R.waiting[key] || []).forEach(function (w) { w[0](payload); });
    delete R.waiting[key];
  };
  R.failed = function (path) { showError("Could not load " + path + ". Is the report folder complete?"); };
  // documents come in bundles (data/docs/<k>.js holds documents bundles[k] …): the bundle of a document
  function bundleOf(index) {
    var starts = R.overview && R.overview.docs && R.overview.docs.bundles;
    if (!starts) return index;
    var lo = 0, hi = starts.length - 1;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (starts[mid] <= index) lo = mid; else hi = mid - 1; }
    return lo;
  }
  function need(kind, index) {
    var store = kind === "doc" ? R.docs : R.items;
    if (store.has(index)) return Promise.resolve(store.get(index));
    return new Promise(function (resolve, reject) {
      var key = kind + ":" + index;
      (R.waiting[key] = R.waiting[key] || []).push([resolve, reject]);
      var file = "data/" + (kind === "doc" ? "docs/" + bundleOf(index) : "items/" + index) + ".js";
      R.loading = R.loading || {};
      if (R.loading[file]) return;  // the bundle is on its way: load() answers every document it holds
      R.loading[file] = true;
      var s = document.createElement("script");
      s.src = file;
      s.onerror = function () {
        delete R.loading[file];
        Object.keys(R.waiting).forEach(function (k) {
          var parts = k.split(":"), i = Number(parts[1]);
          if (parts[0] === kind && (kind === "doc" ? bundleOf(i) === bundleOf(index) : i === index)) {
            R.waiting[k].forEach(function (w) { w[1](new Error("could not load " + file)); }); delete R.waiting[k];
          }
        });
      };
      s.onload = function () { delete R.loading[file]; s.remove(); };
      document.head.appendChild(s);
    });
  }

  /* ---------- small helpers ---------- */
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") e.textContent = v; else if (k === "cls") e.className = v;
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v); else e.setAttribute(k, v === true ? "" : v);
    });
    (kids || []).forEach(function (c) { if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }
  function fmt(v, d) { return v === null || v === undefined || (typeof v === "number" && isNaN(v)) ? "—" : (typeof v === "number" ? (Number.isInteger(v) && d === undefined ? v.toLocaleString("en") : v.toFixed(d === undefined ? 3 : d)) : String(v)); }
  function pct(v) { return v === null || v === undefined ? "—" : (100 * v).toFixed(1) + " %"; }
  function link(text, hash, attrs) { return el("a", Object.assign({ href: hash, text: text }, attrs || {})); }
  function table(head, rows, opts) {
    opts = opts || {};
    R.tables = (R.tables || 0) + 1;
    var capId = "cap-" + R.tables, t = el("table", { cls: opts.cls || null, "aria-labelledby": opts.caption ? capId : null });
    t.appendChild(el("thead", null, [el("tr", null, head.map(function (h) { return el("th", { scope: "col", cls: h.num ? "num" : null, text: h.text || h }); }))]));
    var body = el("tbody");
    rows.forEach(function (r) { body.appendChild(el("tr", null, r.map(function (c, i) {
      if (c && c.nodeType === 1 && c.tagName === "TH") return c;
      if (c && c.nodeType) return el("td", { cls: head[i] && head[i].num ? "num" : null }, [c]);
      return el("td", { cls: head[i] && head[i].num ? "num" : null, text: c === null || c === undefined ? "" : String(c) });
    }))); });
    t.appendChild(body);
    return opts.caption ? el("div", { cls: "tbl" }, [el("p", { cls: "cap", id: capId, text: opts.caption }), t]) : t;
  }
  function pager(total, page, go) {
    var pages = Math.max(1, Math.ceil(total / PAGE));
    return el("div", { cls: "pager", role: "navigation", "aria-label": "pages" }, [
      el("button", { text: "◀ previous", disabled: page <= 0, onclick: function () { go(page - 1); } }),
      el("span", { text: "page " + (page + 1) + " of " + pages + " (" + total.toLocaleString("en") + " rows)" }),
      el("button", { text: "next ▶", disabled: page >= pages - 1, onclick: function () { go(page + 1); } })]);
  }
  function select(label, options, value, change, id) {
    var s = el("select", { id: id, onchange: function () { change(s.value); } }, options.map(function (o) {
      return el("option", { value: o[0], text: o[1], selected: String(o[0]) === String(value) });
    }));
    return el("label", null, [label + " ", s]);
  }
  function bandOf(metric, v) {
    if (v === null || v === undefined || isNaN(v)) return null;
    var bands = R.overview.bands, keys = Object.keys(bands);
    for (var i = 0; i < keys.length; i++) {
      var b = bands[keys[i]];
      if (b.metrics.indexOf(metric) < 0) continue;
      for (var j = 0; j < b.bands.length; j++) {
        if (b.bands[j][0] === null || v >= b.bands[j][0]) return { mark: b.bands[j][2], name: b.bands[j][1], cls: j === 0 ? "b-good" : (j === b.bands.length - 1 ? "b-bad" : "b-mid") };
      }
    }
    return null;
  }
  // reason -> the metrics it is given for, when every one of the rows (two or more) gives it for them
  function commonReasons(rows, c) {
    var out = new Map();
    if (rows.length < 2) return out;
    var first = rows[0];
    Object.keys(first.m).forEach(function (m) {
      var why = first.m[m][c.reason];
      if (!why) return;
      if (rows.every(function (r) { return r.m[m] && r.m[m][c.reason] === why; })) { if (!out.has(why)) out.set(why, []); out.get(why).push(m); }
    });
    return out;
  }

  function valueCell(metric, v, lo, hi, reason) {
    var b = bandOf(metric, v), kids = [fmt(v)];
    if (b) kids.push(el("span", { cls: "band " + b.cls, title: b.name, text: b.mark }));
    if (lo !== null && lo !== undefined) kids.push(el("span", { cls: "ci", text: " [" + fmt(lo) + ", " + fmt(hi) + "]" }));
    return el("span", { title: reason || (b ? b.name : null) }, kids);
  }
  function showError(msg) { var m = document.getElementById("main"); m.textContent = ""; m.appendChild(el("p", { cls: "error", role: "alert", text: msg })); }
  function names() { return R.overview.names; }
  function unitSettings() { return R.overview.settings.map(function (s, i) { return Object.assign({ index: i }, s); }).filter(function (s) { return s.kind === "units"; }); }
  function settingByName(name) {
    var u = unitSettings(), pick = function (n) { return u.filter(function (s) { return s.name === n; })[0]; };
    return pick(name) || pick("word-interval") || pick("char-interval") || u[0];
  }

  /* ---------- routing: #view/arg?k=v ---------- */
  function parse() {
    var h = location.hash.replace(/^#/, ""), q = h.indexOf("?"), path = q < 0 ? h : h.slice(0, q);
    var parts = path.split("/"), params = new URLSearchParams(q < 0 ? "" : h.slice(q + 1));
    return { view: parts[0] || "overview", arg: parts.length > 1 ? decodeURIComponent(parts[1]) : null, params: params };
  }
  function hashFor(view, arg, params) {
    var q = new URLSearchParams();
    Object.keys(params || {}).forEach(function (k) { if (params[k] !== null && params[k] !== undefined && params[k] !== "") q.set(k, params[k]); });
    var s = q.toString();
    return "#" + view + (arg !== null && arg !== undefined ? "/" + encodeURIComponent(arg) : "") + (s ? "?" + s : "");
  }
  R.hashFor = hashFor;
  function docLink(di, setting, group, text) { return link(text || R.overview.docs.ids[di], hashFor("doc", di, { s: setting, g: group }), { "data-doc": di }); }
  function route() {
    var r = parse(), main = document.getElementById("main");
    document.querySelectorAll("#nav a").forEach(function (a) { if (a.dataset.view === r.view) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current"); });
    main.textContent = "";
    try {
      if (r.view === "where") where(main, r.params);
      else if (r.view === "doc") docView(main, r.arg, r.params);
      else if (r.view === "labels") labelsView(main, r.params);
      else if (r.view === "gold") goldView(main);
      else if (r.view === "models") modelsView(main);
      else overview(main);
    } catch (e) { showError("The report could not draw this view: " + e.message); throw e; }
  }
  function start() {
    var o = R.overview;
    document.getElementById("loading") && document.getElementById("loading").remove();
    if (o.items && o.items.length) document.getElementById("nav-labels").hidden = false;
    if (o.adjudication) document.getElementById("nav-gold").hidden = false;
    if (o.estimate || o.alt_test || (o.roles && o.roles.ceiling.length)) document.getElementById("nav-models").hidden = false;
    document.getElementById("footer").textContent = "Made by " + o.study.tool + " from the output directory " + o.out + ". Keys in the document view: n next document, p previous.";
    window.addEventListener("hashchange", route);
    document.addEventListener("keydown", keys);
    route();
  }

  /* ---------- overview ---------- */
  function annotatorsLine(all, roles) {
    var shown = function (xs) { return xs.slice(0, 30).join(", ") + (xs.length > 30 ? ", …" : ""); };
    if (!roles || !roles.humans.length) return all.length + ": " + shown(all);
    var families = Object.keys(roles.families).map(function (f) { return roles.families[f].join(", ") + (roles.families[f].length > 1 ? " (runs of " + f + ")" : ""); });
    return all.length + ": humans " + shown(roles.humans) + "; candidates " + families.join("; ") + " — the agreement table measures the humans alone";
  }

  function overview(main) {
    var o = R.overview, s = o.study;
    main.appendChild(el("h2", { id: "study", text: "The study" }));
    var facts = [["format", s.format], ["study file", s.source], ["inputs", s.inputs + " files, " + fmt(s.input_bytes) + " bytes"],
      ["documents", fmt(s.documents)], ["groups", fmt(s.groups)], ["annotators", annotatorsLine(s.annotators, o.roles)],
      ["layers", (s.layers || []).join(", ")], ["tokenizer", s.tokenizer], ["settings", s.settings.map(function (x) { return x.name; }).join(", ")],
      ["rules", "discontinuous: " + (s.discontinuous || "—") + "; keep_missing: " + s.keep_missing + "; keep_mismatched: " + s.keep_mismatched]];
    main.appendChild(el("dl", { cls: "facts" }, facts.filter(function (f) { return f[1] !== null && f[1] !== undefined; }).reduce(function (a, f) { return a.concat([el("dt", { text: f[0] }), el("dd", { text: String(f[1]) })]); }, [])));
    main.appendChild(el("h3", { text: "What the validation excluded, and why" }));
    if (!o.exclusions.length) main.appendChild(el("p", { cls: "muted", text: "The manifest has no record accounting." }));
    o.exclusions.forEach(function (x) {
      main.appendChild(table(["where the records went", { text: "records", num: 1 }, { text: "share", num: 1 }],
        x.rows.map(function (r) { return [r.reason, fmt(r.n), pct(r.share)]; }), { caption: x.what + " (" + fmt(x.total) + ")" }));
    });
    if (o.quotes && o.quotes.length) main.appendChild(table(["outcome", { text: "quotes", num: 1 }, { text: "share", num: 1 }, "finding"],
      o.quotes.map(function (q) { return [q.outcome, fmt(q.n), pct(q.share), q.code]; }),
      { caption: "Where the quotes were found in the texts (format quotes; each quote's outcome is a finding below)", cls: "quotes" }));
    if (o.findings.length) main.appendChild(table(["finding", "severity", { text: "rows", num: 1 }, "what unitize did", "first messages"],
      o.findings.map(function (f) { return [f.code, f.severity, fmt(f.n), f.action, f.examples.map(function (e) { return (e.doc ? e.doc + ": " : "") + (e.message || ""); }).join("\n")]; }),
      { caption: "Findings in report.jsonl, by code" }));
    agreementSection(main);
  }
  function agreementSection(main) {
    var o = R.overview, a = o.agreement;
    main.appendChild(el("h2", { id: "agreement", text: "Agreement" }));
    if (!a) {
      main.appendChild(el("p", { cls: "notice", text: "No agreement results: this output directory has no agreement/results.parquet. Run `unitize agree " + o.out + "` and then `unitize report " + o.out + "` again to see the numbers here. The disagreement views (Where it disagrees, the document view) come from the unit matrices and are complete without it." }));
      return;
    }
    var bands = o.bands;
    main.appendChild(el("p", { cls: "muted" }, Object.keys(bands).map(function (k) {
      var b = bands[k];
      return el("span", { text: b.metrics.join(", ") + ": " + b.bands.map(function (x) { return x[2] + " " + x[1]; }).join("; ") + " — " + b.source + ". " });
    })));
    var c = {}; a.columns.forEach(function (n, i) { c[n] = i; });
    var skip = ["pair", "label", "doc", "annotator", "annotator_a"].filter(function (n) { return n in c; });
    var known = ["setting", "group", "layer", "metric", "value", "ci_low", "ci_high", "reason", "annotators", "documents", "relations", "units", "units_used", "std_err", "df", "p_value", "pair", "annotator_a", "annotator_b", "label", "doc", "level", "params", "unit", "approach", "mode", "diagnostics"];
    var extra = a.columns.filter(function (n) { return known.indexOf(n) < 0; });
    var keyed = new Map(), advice = new Map();
    a.rows.forEach(function (row) {  // a cell's own rows, and a pairwise metric's mean over the pairs (pair "mean")
      if (skip.some(function (n) { return row[c[n]] !== null && row[c[n]] !== "" && !(n === "pair" && row[c[n]] === "mean"); })) return;
      var key = row[c.setting] + "\u0000" + row[c.group] + "\u0000" + row[c.layer];
      if (!keyed.has(key)) keyed.set(key, { setting: row[c.setting], group: row[c.group], layer: row[c.layer], m: {}, row: row, notes: [] });
      var k = keyed.get(key); k.m[row[c.metric]] = row;
      if ("diagnostics" in c && row[c.diagnostics]) {  // sentences, each once per row: what was seen, then what to do
        JSON.parse(row[c.diagnostics]).forEach(function (d) {  // what was seen, per row; what to do, once under the table
          var said = d.code.replace(/-/g, " ") + ": " + d.detail;
          if (k.notes.indexOf(said) < 0) k.notes.push(said);
          if (d.suggestion) advice.set(d.code, d.suggestion);
        });
      }
      extra.forEach(function (n) { var v = row[c[n]]; if (v !== null && v !== "" && v !== undefined && k.notes.indexOf(n + ": " + v) < 0) k.notes.push(n + ": " + v); });
    });
    var metrics = a.metrics.filter(function (m) { return m !== "cohen" && m !== "scott"; });
    var rows = Array.from(keyed.values()), state = { page: 0, setting: "", filter: "" };
    var holder = el("div");
    var controls = el("div", { cls: "controls" }, [
      select("setting", [["", "all settings"]].concat(unitSettings().concat(o.settings.filter(function (s) { return s.kind === "items"; })).map(function (s) { return [s.name, s.name]; })), "", function (v) { state.setting = v; state.page = 0; draw(); }, "agree-setting"),
      el("label", null, ["group contains ", el("input", { type: "search", id: "agree-filter", oninput: function (e) { state.filter = e.target.value; state.page = 0; draw(); } })])]);
    main.appendChild(controls);
    main.appendChild(holder);
    function draw() {
      var shown = rows.filter(function (r) { return (!state.setting || r.setting === state.setting) && (!state.filter || String(r.group).indexOf(state.filter) >= 0); });
      holder.textContent = "";
      var head = ["setting", "group", "layer"].concat(metrics.map(function (m) { return { text: m, num: 1 }; }), [{ text: "units", num: 1 }, { text: "documents", num: 1 }, { text: "annotators", num: 1 }, "notes and diagnostics", "view"]);
      // a reason every row shown has is said once, under the table; the others once per row, with the metrics it holds for
      var everywhere = commonReasons(shown, c);
      var body = shown.slice(state.page * PAGE, state.page * PAGE + PAGE).map(function (r) {
        var first = r.row, byReason = new Map();
        var cells = metrics.map(function (m) {
          var x = r.m[m];
          if (!x) return el("span", { cls: "muted", title: m + " has no value for this setting, group and layer in results.parquet: it was not measured here (a subset run, or another kind of data)", text: "not measured" });
          var why = x[c.reason];
          if (why && !everywhere.has(why)) { if (!byReason.has(why)) byReason.set(why, []); byReason.get(why).push(m); }
          if (m === "cochran-q" && x[c.value] !== null && x[c.value] === x[c.value]) {  // a test statistic, not a coefficient
            return el("span", { title: "Cochran's Q: the statistic, its degrees of freedom and p-value" },
                      ["Q " + fmt(x[c.value]) + (x[c.df] !== null ? " (df " + fmt(x[c.df]) : "") + (x[c.p_value] !== null ? ", p " + fmt(x[c.p_value]) + ")" : x[c.df] !== null ? ")" : "")]);
          }
          return valueCell(m, x[c.value], "ci_low" in c ? x[c.ci_low] : null, "ci_high" in c ? x[c.ci_high] : null, why);
        });
        var reasons = Array.from(byReason, function (e) { return e[1].join(", ") + ": " + e[0]; });
        var st = unitSettings().filter(function (s) { return s.name === r.setting; })[0], g = st && st.groups.filter(function (x) { return x.group === r.group; })[0];
        var view = st && g && g.worst_doc !== null && g.worst_doc !== undefined ? docLink(g.worst_doc, r.setting, r.group, "worst document →") :
          (r.setting && o.items.length && !st ? link("items →", hashFor("labels", null, { g: r.group })) : link("where →", hashFor("where", null, { s: r.setting })));
        return [r.setting, r.group, r.layer].concat(cells, [fmt(first[c.units]), fmt(first[c.documents]), fmt(first[c.annotators]), reasons.concat(r.notes).join("\n"), view]);
      });
      holder.appendChild(table(head, body, { caption: "Agreement per setting × group × layer (agreement/results.parquet; " + shown.length + " rows; pairs, labels and documents in results.csv)", cls: "agree" }));
      everywhere.forEach(function (ms, why) { holder.appendChild(el("p", { cls: "note", text: "In every row: " + ms.join(", ") + " — " + why + "." })); });
      var seen = new Set(); shown.forEach(function (r) { r.notes.forEach(function (n) { seen.add(n.split(":")[0].replace(/ /g, "-")); }); });
      advice.forEach(function (what, code) { if (seen.has(code)) holder.appendChild(el("p", { cls: "note advice", text: code.replace(/-/g, " ") + " — " + what.charAt(0).toUpperCase() + what.slice(1) + "." })); });
      holder.appendChild(pager(shown.length, state.page, function (p) { state.page = p; draw(); }));
    }
    draw();
    ceilingSection(main);
    altTestSection(main);
    if (o.plots.length) {
      main.appendChild(el("h3", { text: "Plots (agreement/plots)" }));
      main.appendChild(el("div", { cls: "plots" }, o.plots.map(function (p) {
        return el("figure", null, [el("img", { src: "plots/" + p, alt: "box plot " + p.replace(/\.png$/, "") }), el("figcaption", { cls: "muted", text: p })]);
      })));
    }
  }

  function ceilingSection(main) {
    var r = R.overview.roles;
    if (!r || !r.ceiling.length) return;
    main.appendChild(el("h3", { id: "ceiling", text: "Humans and candidates (agreement/roles.csv)" }));
    main.appendChild(el("p", { cls: "muted", text: "The human ceiling: a metric's mean over the pairs of humans; beside it each candidate's mean over its pairs with the humans, and a family's runs with each other. Each pair rests on the documents both coded." }));
    pagedTable(main, ["setting", "layer", "metric", "who", { text: "mean", num: 1 }, { text: "pairs", num: 1 }], r.ceiling, function (x) {
      var who = x.who === "humans" ? "humans (the ceiling)" : x.who.slice(-5) === " runs" ? x.who + " with each other" : x.who + " (candidate) with the humans";
      return [x.setting, x.layer, x.metric, who, valueCell(x.metric, x.value, null, null, null), fmt(x.n)];
    }, "ceiling");
  }

  function altTestSection(main) {
    var t = R.overview.alt_test;
    if (!t) return;
    main.appendChild(el("h3", { id: "alt-test", text: t.title + " (agreement/alt_test.csv)" }));
    main.appendChild(el("p", { cls: "muted", text: "Can a candidate (a model) replace a human? Each human is left out in turn, and the candidate and that human are scored against the remaining humans on every instance. ω, the winning rate, is the share of humans whose one-sided test at the margin ε is rejected (the human is not better than the candidate by ε); the candidate passes when ω ≥ " + t.passing + "; it fails only when the reverse test (the human is better by ε) is rejected for that share of the humans; otherwise the verdict is inconclusive. ρ, the advantage probability, is the share of instances on which the candidate scores at least as well as the human, averaged over the humans, with its bootstrap interval. " + t.source + "." }));
    main.appendChild(table(["setting", "candidate", "score", { text: "ε", num: 1 }, { text: "humans tested", num: 1 }, { text: "instances", num: 1 }, { text: "ω", num: 1 }, { text: "ρ", num: 1 }, "verdict"],
      t.verdicts.map(function (v) {
        var verdict = v.verdict || (v.passed ? "passed" : (v.humans ? "failed" : "not tested"));
        var toPass = verdict === "inconclusive" ? (v.instances_to_pass ? " (≈ " + fmt(v.instances_to_pass) + " instances would pass it with probability ≥ 80 %)" : " (8× the instances would not pass it with probability ≥ 80 %)") : "";
        return [v.setting, v.candidate, v.score, fmt(v.epsilon, 2), fmt(v.humans), fmt(v.instances), fmt(v.winning_rate, 2),
          el("span", null, [fmt(v.advantage_probability, 2), v.advantage_ci_low !== null ? el("span", { cls: "ci", text: " [" + fmt(v.advantage_ci_low, 2) + ", " + fmt(v.advantage_ci_high, 2) + "]" }) : null]),
          el("span", { cls: "band " + (verdict === "passed" ? "b-good" : verdict === "failed" ? "b-bad" : "b-mid"), text: verdict + toPass,
            title: verdict === "inconclusive" ? "neither test decides: no more than half of the humans are beaten, nor better by ε; more instances would tell (unitize plan)" : "" })];
      }), { caption: "The verdict per setting and candidate", cls: "alt-test" }));
    if (t.humans.length) main.appendChild(table(["setting", "candidate", "human", { text: "instances", num: 1 }, { text: "candidate wins", num: 1 }, { text: "human wins", num: 1 }, { text: "p-value", num: 1 }, "rejected"],
      t.humans.map(function (h) {
        var tested = h.candidate_wins !== null;
        return [h.setting, h.candidate, h.human, fmt(h.instances), fmt(h.candidate_wins), fmt(h.human_wins), fmt(h.p_value),
          !tested ? "skipped (too few instances)" : (h.rejected ? "yes" : (h.p_value === null ? "no (p-value NaN)" : "no"))];
      }), { caption: "Each human's test (agreement/alt_test_humans.csv; Benjamini–Yekutieli over the humans)", cls: "alt-humans" }));
  }

  /* ---------- models: the alt-test, estimates, prompts, stability ---------- */
  function interval(v, lo, hi) { return el("span", null, [fmt(v, 3), lo !== null && lo !== undefined ? el("span", { cls: "ci", text: " [" + fmt(lo, 3) + ", " + fmt(hi, 3) + "]" }) : null]); }
  function modelsView(main) {
    var e = R.overview.estimate, out = R.overview.out;
    main.appendChild(el("h2", { id: "models", text: "Models as annotators" }));
    ceilingSection(main);
    altTestSection(main);
    if (!e) { main.appendChild(el("p", { cls: "notice", text: "No estimates: run `unitize adjudicate " + out + "`, `unitize estimate " + out + "` and then `unitize report " + out + "` again." })); return; }
    main.appendChild(el("h3", { id: "estimates", text: "What the corpus holds, from the model and the humans (estimate/estimates.csv)" }));
    main.appendChild(el("p", { cls: "muted", text: "Prediction-powered inference (PPI++): the model's mean over every observation, corrected by how the humans and the model differ where both labelled; beside it the humans alone and the model alone. Valid when the observations given to humans are a random sample." }));
    pagedTable(main, ["candidate", "group or layer", "label", "quantity", { text: "PPI++ [interval]", num: 1 }, { text: "humans alone", num: 1 }, { text: "model alone", num: 1 }, { text: "labeled", num: 1 }, { text: "model only", num: 1 }, { text: "λ", num: 1 }, "note"],
      e.estimates, function (r) {
        return [r.candidate, r.layer || r.group || "", r.label, r.quantity, interval(r.estimate, r.ci_low, r.ci_high), interval(r.humans_only, r.humans_low, r.humans_high),
          fmt(r.model_only), fmt(r.labeled), fmt(r.unlabeled), fmt(r.lambda, 2), r.reason || ""];
      }, "estimates");
    if (e.prompts.length) {
      main.appendChild(el("h3", { id: "prompts", text: "Prompt variants (estimate/prompts.csv, prompt_spread.csv)" }));
      main.appendChild(table(["model", "prompt", { text: "runs", num: 1 }, "score", { text: "against the gold [interval]", num: 1 }, "alt-test verdicts"], e.prompts.map(function (p) {
        return [p.model, p.prompt, fmt(p.runs), p.metric, interval(p.value, p.ci_low, p.ci_high), p.alt_test || "— (unitize agree --alt-test)"];
      }), { caption: "Each prompt variant's runs against the humans' gold", cls: "prompts" }));
      if (e.prompt_spread.length) main.appendChild(table(["model", { text: "prompts", num: 1 }, "best", "worst", { text: "spread [interval]", num: 1 }], e.prompt_spread.map(function (m) {
        return [m.model, fmt(m.prompts), m.best, m.worst, interval(m.spread, m.ci_low, m.ci_high)];
      }), { caption: "How far apart a model's prompts are: the best variant's score minus the worst's", cls: "prompt-spread" }));
    }
    if (!e.stability.length) return;
    main.appendChild(el("h3", { id: "stability", text: "Run stability (estimate/stability.csv, stability_curve.csv)" }));
    main.appendChild(table(["family", { text: "runs", num: 1 }, { text: "observations flipping", num: 1 }, { text: "flip rate", num: 1 }, { text: "unit flip rate", num: 1 }, { text: "mean entropy (bits)", num: 1 }, { text: "runs for a stable majority", num: 1 }],
      e.stability.map(function (s) {
        return [s.family, fmt(s.runs), fmt(s.flipped) + " / " + fmt(s.observations), pct(s.flip_rate), pct(s.unit_flip_rate), fmt(s.mean_entropy), s.runs_needed === null ? (s.runs < 3 ? "— (three runs or more)" : "—") : fmt(s.runs_needed)];
      }), { caption: "Each family of runs with itself, on the units every run coded", cls: "stability" }));
    main.appendChild(table(["family", { text: "k runs", num: 1 }, { text: "choices", num: 1 }, { text: "majority agrees with the gold", num: 1 }, { text: "recovers the majority of all", num: 1 }],
      e.stability_curve.map(function (c) { return [c.family, fmt(c.k), fmt(c.choices), pct(c.agreement_with_gold), pct(c.recovery)]; }), { caption: "The majority of k runs", cls: "stability-curve" }));
    main.appendChild(el("h3", { text: "Unstable observations, the most uncertain first (estimate/unstable.csv)" }));
    pagedTable(main, ["family", "group", "layer", "observation", { text: "units", num: 1 }, { text: "flipping", num: 1 }, { text: "entropy", num: 1 }, "values"],
      e.unstable, function (u) { return [u.family, u.group, u.layer || "", u.observation, fmt(u.units), fmt(u.flipped_units), fmt(u.entropy), u.values || ""]; }, "unstable");
  }

  /* ---------- where it disagrees ---------- */
  function where(main, params) {
    var units = unitSettings();
    if (!units.length) { main.appendChild(el("p", { text: "This output directory holds item labels only: see Flat labels." })); return; }
    var st = settingByName(params.get("s")), n = names();
    main.appendChild(el("h2", { text: "Where it disagrees" }));
    main.appendChild(el("p", { cls: "muted", text: "Disagreement share: of the units coded by at least two annotators, the share where their values are not all equal. A region is a maximal run of such units in one document." }));
    main.appendChild(el("div", { cls: "controls" }, [select("setting", units.map(function (s) { return [s.name, s.name]; }), st.name, function (v) { location.hash = hashFor("where", null, { s: v }); }, "where-setting")]));
    var metric = R.overview.agreement ? R.overview.agreement.summary_metric : null;
    main.appendChild(el("h3", { text: "Groups, worst first" + (metric ? " (by " + metric + ", then by disagreement share)" : " (by disagreement share)") }));
    pagedTable(main, ["#", "group", "layer", { text: metric || "metric", num: 1 }, { text: "disagreement share", num: 1 }, { text: "units differing / comparable", num: 1 }, { text: "regions", num: 1 }, "worst document"],
      st.groups, function (g, i) {
        return [String(i + 1), link(g.group, hashFor("where", null, { s: st.name, g: g.group }) ), g.layer || "", valueCell(metric, g.value), pct(g.share), fmt(g.disagreeing) + " / " + fmt(g.comparable), fmt(g.regions),
          g.worst_doc !== null && g.worst_doc !== undefined ? docLink(g.worst_doc, st.name, g.group) : ""];
      });
    var group = params.get("g"), gi = group !== null ? n.groups.indexOf(group) : -1;
    var stats = new Map();
    st.doc_stats.forEach(function (r) { if (gi < 0 || r[0] === gi) { var s = stats.get(r[1]) || [0, 0, 0]; stats.set(r[1], [s[0] + r[2], s[1] + r[3], s[2] + r[4]]); } });
    var order = st.doc_order.filter(function (d) { return stats.has(d); });
    R.order = { setting: st.name, group: gi >= 0 ? group : null, docs: order };
    main.appendChild(el("h3", { id: "documents", text: "Documents, worst first" + (gi >= 0 ? " in group " + group : "") }));
    if (gi >= 0) main.appendChild(el("p", null, [link("all groups", hashFor("where", null, { s: st.name }))]));
    pagedTable(main, ["#", "document", { text: "disagreement share", num: 1 }, { text: "units differing / comparable", num: 1 }, { text: "regions", num: 1 }, { text: "groups", num: 1 }],
      order, function (d, i) {
        var s = stats.get(d);
        return [String(i + 1), docLink(d, st.name, gi >= 0 ? group : null), pct(s[0] ? s[1] / s[0] : null), fmt(s[1]) + " / " + fmt(s[0]), fmt(s[2]), fmt(R.overview.docs.groups[d].length)];
      }, "docs-list");
    pairSection(main, st, group);
  }
  function pagedTable(main, head, items, row, id) {
    var holder = el("div", { id: id || null }), page = 0;
    function draw() {
      holder.textContent = "";
      holder.appendChild(table(head, items.slice(page * PAGE, page * PAGE + PAGE).map(function (x, k) { return row(x, page * PAGE + k); })));
      if (items.length > PAGE) holder.appendChild(pager(items.length, page, function (p) { page = p; draw(); }));
    }
    draw();
    main.appendChild(holder);
  }
  function matrixTable(labels, cell, caption) {
    return table([""].concat(labels.map(function (l) { return { text: l, num: 1 }; })), labels.map(function (l, i) {
      var th = el("th", { scope: "row", text: l });
      return [th].concat(labels.map(function (_, j) { return cell(i, j); }));
    }), { caption: caption, cls: "heat" });
  }
  function pairSection(main, st, group) {
    var n = names(), holder = el("div");
    main.appendChild(el("h3", { text: "Annotator pairs" + (st.value === "label" ? " and label confusion" : "") }));
    var choices = st.pairs.length ? st.pairs : st.confusion;
    if (!choices.length) { main.appendChild(el("p", { cls: "muted", text: "No pair matrix: crowd data (too many annotators) or a single annotator." })); }
    var keyOf = function (p) { return p.group + ":" + p.layer; };
    var worst = st.groups.length ? n.groups.indexOf(group || st.groups[0].group) : 0;
    var current = (choices.filter(function (p) { return p.group === worst; })[0] || choices[0]);
    if (!current) return;
    main.appendChild(el("div", { cls: "controls" }, [select("group and layer", choices.map(function (p) { return [keyOf(p), n.groups[p.group] + " · " + n.layers[p.layer]]; }), keyOf(current), function (v) { current = choices.filter(function (p) { return keyOf(p) === v; })[0]; draw(); }, "pair-choice")]));
    main.appendChild(holder);
    function draw() {
      holder.textContent = "";
      var p = st.pairs.filter(function (x) { return keyOf(x) === keyOf(current); })[0];
      if (p) holder.appendChild(pairTable(p));
      var conf = st.confusion.filter(function (x) { return keyOf(x) === keyOf(current); })[0];
      if (conf) holder.appendChild(confusionTable(conf));
    }
    draw();
  }
  function pairTable(p) {
    return matrixTable(p.annotators, function (i, j) {
      if (i === j) return el("span", { cls: "muted", text: "—" });
      return el("span", { title: "units both coded: " + p.n[i][j] }, [el("b", { text: "κ " + fmt(p.kappa[i][j]) }), " · " + pct(p.observed[i][j]) + " same · n " + fmt(p.n[i][j])]);
    }, "Cohen's kappa and observed agreement (share of units both coded with the same value) per annotator pair, computed from the unit matrices");
  }
  function confusionTable(conf) {
    var t = matrixTable(conf.values, function (i, j) { return fmt(conf.counts[i][j]); }, "Label confusion: how often one annotator gave the row value while another gave the column value to the same unit (all ordered pairs of annotators; diagonal = agreement, marked by hatching)");
    t.querySelectorAll("tbody tr").forEach(function (tr, i) { tr.children[i + 1].classList.add("diag"); tr.children[i + 1].setAttribute("title", "agreement: both gave " + conf.values[i]); });
    return t;
  }

  /* ---------- document view ---------- */
  function docView(main, arg, params) {
    var o = R.overview, ids = o.docs.ids;
    if (!ids.length) { main.appendChild(el("p", { text: "No documents: this output directory holds item labels only." })); return; }
    var di = arg === null ? (settingByName(params.get("s")) || { doc_order: [0] }).doc_order[0] || 0 : parseInt(arg, 10);
    if (!(di >= 0 && di < ids.length)) { showError("No document number " + arg + " in this report."); return; }
    var status = el("p", { role: "status", text: "Loading document " + ids[di] + " (data/docs/" + bundleOf(di) + ".js)…" });
    main.appendChild(status);
    need("doc", di).then(function (doc) {
      if (parse().view !== "doc" || (parse().arg !== null && parseInt(parse().arg, 10) !== di)) return;
      status.remove();
      drawDoc(main, di, doc, params);
    }, function (e) { showError(e.message); });
  }
  function neighbours(di, st) {
    var order = R.order && R.order.setting === st.name && R.order.docs.indexOf(di) >= 0 ? R.order.docs : st.doc_order;
    var k = order.indexOf(di);
    return { k: k, n: order.length, prev: k > 0 ? order[k - 1] : null, next: k >= 0 && k < order.length - 1 ? order[k + 1] : null };
  }
  function drawDoc(main, di, doc, params) {
    var o = R.overview, n = names(), units = unitSettings();
    var st = settingByName(params.get("s")), groups = o.docs.groups[di].map(function (g) { return n.groups[g]; });
    var group = groups.indexOf(params.get("g")) >= 0 ? params.get("g") : groups[0], gi = n.groups.indexOf(group);
    var nb = neighbours(di, st), go = function (s, g, d) { location.hash = hashFor("doc", d === undefined ? di : d, { s: s, g: g }); };
    main.appendChild(el("h2", { id: "doc-title", tabindex: "-1", text: "Document " + doc.id }));
    main.appendChild(el("div", { cls: "docbar" }, [
      el("button", { id: "prev-doc", text: "◀ previous (p)", disabled: nb.prev === null, onclick: function () { go(st.name, null, nb.prev); } }),
      el("span", { text: nb.k >= 0 ? "document " + (nb.k + 1) + " of " + nb.n + " by disagreement, worst first" : "" }),
      el("button", { id: "next-doc", text: "next (n) ▶", disabled: nb.next === null, onclick: function () { go(st.name, null, nb.next); } }),
      link("all documents", hashFor("where", null, { s: st.name, g: R.order && R.order.group ? R.order.group : null }) + "")]));
    var axes = function (key) { return Array.from(new Set(units.map(function (s) { return s[key] || ""; }))); };
    var pick = function (key, v) {
      var want = { unit: st.unit, approach: st.approach, mode: st.mode || "" }; want[key] = v;
      var s = units.filter(function (x) { return x.unit === want.unit && x.approach === want.approach && (x.mode || "") === want.mode; })[0] || units.filter(function (x) { return x[key] === v; })[0];
      go(s.name, group);
    };
    var radios = function (key, title) {
      var vals = axes(key); if (vals.length < 2) return null;
      return el("fieldset", null, [el("legend", { text: title })].concat(vals.map(function (v) {
        return el("label", null, [el("input", { type: "radio", name: key, value: v, checked: (st[key] || "") === v, onchange: function () { pick(key, v); } }), " " + v + " "]);
      })));
    };
    main.appendChild(el("div", { cls: "controls" }, [
      groups.length > 1 || group !== "all" ? select("group", groups.map(function (g) { return [g, g]; }), group, function (v) { go(st.name, v); }, "doc-group") : null,
      radios("unit", "units"), radios("approach", "approach"), radios("mode", "mode")]));
    if (doc.text === null || doc.text === undefined) main.appendChild(el("p", { cls: "notice", text: "This output directory keeps no text for this document (documents.parquet has no text column: made by an older unitize). Re-run `unitize convert` to see the text; the regions are listed below." }));
    var segs = ((doc.segs || {})[st.unit] || []).filter(function (s) { return s[0] === gi; });
    var regs = ((doc.regions || {})[String(st.index)] || []).filter(function (r) { return r[0] === gi; }).sort(function (a, b) { return a[2] - b[2] || a[1] - b[1]; });
    var present = (((doc.present || {})[st.unit] || {})[String(gi)] || []).slice();
    segs.forEach(function (s) { if (present.indexOf(s[2]) < 0) present.push(s[2]); });
    var all = o.study.annotators.map(function (a) { return n.annotators.indexOf(a); }).filter(function (a) { return a >= 0; });
    var tracks = all.length && all.length <= 40 ? all : present.sort(function (a, b) { return a - b; });
    present.forEach(function (a) { if (tracks.indexOf(a) < 0) tracks.push(a); });
    var byLabel = (o.study.layers || []).length <= 1 && segs.some(function (s) { return s[3] >= 0; });
    var styleOf = function (s) { return byLabel ? (s[3] >= 0 ? s[3] : 0) : s[1]; };
    var styleName = function (k) { return byLabel ? n.labels[k] : n.layers[k]; };
    var styles = Array.from(new Set(segs.map(styleOf))).sort(function (a, b) { return a - b; });
    main.appendChild(el("div", { cls: "legend sticky", id: "legend" }, [el("span", { cls: "tracknames" }, ["Tracks under each line, top to bottom: ", el("ol", null, tracks.map(function (a, k) { return el("li", { text: (k + 1) + " " + n.annotators[a] + (present.indexOf(a) < 0 ? " (no data here)" : "") }); }))])]
      .concat(styles.map(function (k) { return el("span", null, [el("span", { cls: "sw s" + (k % 8), "aria-hidden": "true" }), (byLabel ? "label " : "layer ") + styleName(k)]); }),
        [el("span", null, [el("span", { cls: "sw", style: "background: var(--dis)" }), "dashed underline + numbered marker: annotators differ (" + st.name + ")"])])));
    var view = el("div", { cls: "textview", id: "textview", lang: "" });
    if (doc.text !== null && doc.text !== undefined) renderText(view, doc.text, segs, regs, tracks, present, styleOf, styleName, n, byLabel);
    main.appendChild(view);
    regionTable(main, doc, regs, tracks, n);
    var title = document.getElementById("doc-title"); if (title && !R.keepFocus) title.focus({ preventScroll: true });
    R.keepFocus = false;
    R.current = { di: di, st: st, group: group, nb: nb };
  }
  function renderText(view, text, segs, regs, tracks, present, styleOf, styleName, n, byLabel) {
    var cuts = new Set([0, text.length]);
    segs.forEach(function (s) { cuts.add(Math.min(s[4], text.length)); cuts.add(Math.min(s[5], text.length)); });
    regs.forEach(function (r) { cuts.add(Math.min(r[2], text.length)); cuts.add(Math.min(r[3], text.length)); });
    var ws = /\s+/g, m;
    while ((m = ws.exec(text)) !== null) { cuts.add(m.index + m[0].length); for (var q = m.index; q < m.index + m[0].length; q++) if (text[q] === "\n") { cuts.add(q); cuts.add(q + 1); } }
    var points = Array.from(cuts).sort(function (a, b) { return a - b; });
    var bySegStart = segs.slice().sort(function (a, b) { return a[4] - b[4]; }), si = 0, active = [];
    var byRegStart = regs.map(function (r, k) { return k; }).sort(function (a, b) { return regs[a][2] - regs[b][2] || a - b; }), ri = 0, open = [];
    var frag = document.createDocumentFragment(), line = el("div", { cls: "line" });
    for (var p = 0; p < points.length - 1; p++) {
      var b = points[p], e = points[p + 1];
      active = active.filter(function (s) { return s[5] > b; });
      while (si < bySegStart.length && bySegStart[si][4] <= b) { if (bySegStart[si][5] > b) active.push(bySegStart[si]); si++; }
      open = open.filter(function (k) { return regs[k][3] > b; });
      while (ri < byRegStart.length && regs[byRegStart[ri]][2] <= b) {
        var k = byRegStart[ri++];
        if (regs[k][3] <= b) continue;
        open.push(k);
        line.appendChild(el("span", { cls: "rm", id: "r-" + (k + 1), tabindex: "-1", title: "region " + (k + 1) + " (" + n.layers[regs[k][1]] + "): annotators differ here", text: String(k + 1) }));
      }
      var piece = text.slice(b, e);
      if (piece === "\n") { frag.appendChild(line); line = el("div", { cls: "line" }); continue; }
      if (piece === "\r") continue;
      var cell = el("span", { cls: "c" + (open.length ? " dis" : "") });
      cell.appendChild(el("span", { cls: "t", text: piece }));
      var info = open.map(function (k) { return "region " + (k + 1) + ": annotators differ (" + n.layers[regs[k][1]] + ")"; });
      tracks.forEach(function (a) {
        var track = el("span", { cls: "k" + (present.indexOf(a) < 0 ? " miss" : ""), "aria-hidden": "true" });
        active.forEach(function (s) {
          if (s[2] !== a) return;
          track.appendChild(el("i", { cls: "s" + (styleOf(s) % 8) }));
          info.push(n.annotators[a] + ": " + styleName(styleOf(s)) + (!byLabel && s[3] >= 0 ? " (" + n.labels[s[3]] + ")" : ""));
        });
        cell.appendChild(track);
      });
      cell._info = info;
      line.appendChild(cell);
    }
    frag.appendChild(line);
    view.appendChild(frag);
    view.addEventListener("mouseover", function (ev) { var c = ev.target.closest(".c"); if (c && !c.title) c.title = c._info.length ? c._info.join("\n") : "no segment"; });
  }
  function regionTable(main, doc, regs, tracks, n) {
    main.appendChild(el("h3", { text: "Regions where the annotators differ (" + regs.length + ")" }));
    if (!regs.length) { main.appendChild(el("p", { cls: "muted", text: "None in this group and setting." })); return; }
    var head = ["#", "layer", { text: "characters", num: 1 }, "text"].concat(tracks.map(function (a) { return n.annotators[a]; }));
    pagedTable(main, head, regs, function (r, k) {
      var per = {};
      r[4].forEach(function (run) { (per[run[0]] = per[run[0]] || []).push(run); });
      var go = el("button", { text: String(k + 1), title: "show region " + (k + 1) + " in the text", onclick: function () {
        var m = document.getElementById("r-" + (k + 1)); if (!m) return;
        document.querySelectorAll(".rm.current").forEach(function (x) { x.classList.remove("current"); });
        m.classList.add("current"); m.scrollIntoView({ block: "center" }); m.focus({ preventScroll: true });
      } });
      return [go, n.layers[r[1]], r[2] + "–" + r[3], doc.text ? doc.text.slice(r[2], Math.min(r[3], r[2] + 200)) : ""].concat(tracks.map(function (a) {
        var rs = per[a]; if (!rs) return "no data";
        var marked = rs.filter(function (x) { return !x[4]; }), vals = Array.from(new Set(marked.map(function (x) { return x[1]; })));
        if (!marked.length) return "— not marked";
        return vals.join(" / ") + (marked.length < rs.length ? " (part)" : "");
      }));
    }, "regions");
    document.querySelector("#regions table").classList.add("regions");
  }
  function keys(ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || /^(INPUT|SELECT|TEXTAREA)$/.test((ev.target || {}).tagName || "")) return;
    if (parse().view !== "doc" || !R.current) return;
    var nb = R.current.nb, to = ev.key === "n" || ev.key === "]" ? nb.next : (ev.key === "p" || ev.key === "[" ? nb.prev : null);
    if (to === null || to === undefined) return;
    ev.preventDefault();
    location.hash = hashFor("doc", to, { s: R.current.st.name, g: R.order && R.order.group ? R.order.group : null });
  }

  /* ---------- gold and review (OUT/adjudication, from unitize adjudicate) ---------- */
  function goldView(main) {
    var a = R.overview.adjudication;
    main.appendChild(el("h2", { id: "gold", text: "Gold and review queue" }));
    if (!a) { main.appendChild(el("p", { cls: "notice", text: "No adjudication: run `unitize adjudicate " + R.overview.out + "` and then `unitize report " + R.overview.out + "` again." })); return; }
    var s = a.summary;
    var facts = [["method", s.method + (s.min_share ? " (min share " + s.min_share + ")" : "")], ["setting", s.setting],
      ["gold", s.kind === "units" ? fmt(s.gold_spans) + " gold spans" : fmt(s.resolved) + " of " + fmt(s.coded) + " items with a gold label"],
      ["units", fmt(s.units) + " (" + fmt(s.coded) + " coded, " + fmt(s.tied) + " tied, " + fmt(s.review_units) + " up for review)"],
      ["review queue", fmt(s.review_regions) + " regions: confidence below " + s.review_below + ", tied, or no gold (adjudication/review.csv)"],
      ["written as", s.to ? s.to + " in " + s.dest + " (relative to the output directory; annotator " + s.annotator + ")" : null]];
    main.appendChild(el("dl", { cls: "facts" }, facts.filter(function (f) { return f[1] !== null && f[1] !== undefined; }).reduce(function (x, f) { return x.concat([el("dt", { text: f[0] }), el("dd", { text: String(f[1]) })]); }, [])));
    if (a.candidates && a.candidates.length) main.appendChild(table(["setting", "candidate", { text: "units", num: 1 }, { text: "accuracy", num: 1 }, { text: "gold spans", num: 1 }, { text: "its spans", num: 1 }, { text: "matched", num: 1 }, { text: "span F1", num: 1 }],
      a.candidates.map(function (x) { return [x.setting, x.candidate, fmt(x.units), fmt(x.unit_accuracy), fmt(x.gold_spans), fmt(x.candidate_spans), fmt(x.matched_spans), fmt(x.span_f1)]; }),
      { caption: "Candidates against the gold (adjudication/candidates.csv): they did not vote; accuracy on the units both have, span F1 by exact match", cls: "candidates" }));
    var rows = a.review;
    if (!rows.length) { main.appendChild(el("p", { cls: "muted", text: "Nothing to review: every decision rests on enough votes." })); return; }
    if (rows.length < s.review_regions) main.appendChild(el("p", { cls: "muted", text: "The first " + fmt(rows.length) + " regions; all of them are in adjudication/review.csv." }));
    pagedTable(main, ["#", "group", "document", "layer", { text: "characters", num: 1 }, "text", "gold", { text: "confidence", num: 1 }, "why", "labels"], rows, function (r, i) {
      var di = R.overview.docs.ids.indexOf(r.doc);
      return [String(i + 1), r.group, di >= 0 ? docLink(di, r.setting, r.group, r.doc) : r.doc, r.layer, r.begin === null ? "" : r.begin + "–" + r.end,
        r.text === null ? "" : r.text.slice(0, 200), r.gold.join(" / ") || "—", fmt(r.confidence), r.why.join("; "),
        Object.keys(r.labels).map(function (k) { return k + "=" + r.labels[k].join("/"); }).join("; ")];
    }, "review");
  }

  /* ---------- flat labels ---------- */
  function labelsView(main, params) {
    var groups = R.overview.items;
    main.appendChild(el("h2", { text: "Flat labels" }));
    if (!groups.length) { main.appendChild(el("p", { text: "No item labels in this output directory." })); return; }
    var g = groups.filter(function (x) { return x.group === params.get("g"); })[0] || groups.slice().sort(function (a, b) { return (b.share || 0) - (a.share || 0); })[0];
    main.appendChild(el("div", { cls: "controls" }, [select("item group", groups.map(function (x) { return [x.group, x.group + " (" + pct(x.share) + " of items differ)"]; }), g.group, function (v) { location.hash = hashFor("labels", null, { g: v }); }, "items-group")]));
    main.appendChild(el("p", { text: fmt(g.items) + " items; " + fmt(g.comparable) + " labelled by at least two annotators; " + fmt(g.disagreeing) + " with different labels (" + pct(g.share) + ")." }));
    var d = g.distribution;
    main.appendChild(table(["annotator"].concat(d.values.map(function (v) { return { text: v, num: 1 }; }), [{ text: "total", num: 1 }]),
      d.annotators.map(function (a, i) { var row = d.counts[i]; return [a].concat(row.map(function (x) { return fmt(x); }), [fmt(row.reduce(function (s, x) { return s + x; }, 0))]); }),
      { caption: "Label distribution per annotator" + (d.omitted ? " (the " + d.annotators.length + " most active; " + d.omitted + " more)" : "") }));
    main.appendChild(confusionTable(g.confusion));
    if (g.pairs) main.appendChild(pairTable(g.pairs));
    main.appendChild(el("h3", { text: "Items with disagreement" }));
    var status = el("p", { role: "status", text: "Loading data/items/" + g.index + ".js…" });
    main.appendChild(status);
    need("items", g.index).then(function (payload) {
      status.remove();
      var ann = R.overview.study.annotators.length <= 40 ? R.overview.study.annotators : null;
      pagedTable(main, ["item"].concat(ann || ["labels"]), payload.rows, function (r) {
        var byA = {}; r[1].forEach(function (x) { byA[x[0]] = x[1]; });
        return [r[0]].concat(ann ? ann.map(function (a) { return byA[a] === undefined ? "—" : byA[a]; }) : [r[1].map(function (x) { return x[0] + "=" + x[1]; }).join("; ")]);
      }, "items-list");
    }, function (e) { showError(e.message); });
  }
})();
