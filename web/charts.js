// perfcast's HTML pages: draws the charts of one page from the command's --json, embedded in the page as
// <script id="perfcast-data">, with Observable Plot (inlined before this script at build time, docs/charts.md).
// The page kind comes from <div id="charts" data-page="...">; the texts, in the page's language, from
// <script id="perfcast-labels">. Every mark group a test counts carries an aria-description naming it.
(function () {
  "use strict";
  const root = document.getElementById("charts");
  if (!root || typeof Plot === "undefined") return;
  const data = JSON.parse(document.getElementById("perfcast-data").textContent);
  const L = JSON.parse(document.getElementById("perfcast-labels").textContent);

  // One colour per bound (the names of src/cost/kernel_cost.cpp bound_name), the same on every chart.
  const BOUNDS = ["tensor_compute", "cuda_compute", "dram_bandwidth", "latency", "host_overhead", "input_pipeline",
                  "host_to_device", "communication"];
  const BOUND_COLORS = ["#4e79a7", "#59a14f", "#e15759", "#f28e2b", "#b07aa1", "#9c755f", "#edc948", "#76b7b2"];
  // The legend lists only the bounds a chart shows, each in its fixed colour.
  const boundColor = (rows) => {
    const seen = new Set(rows.map((r) => r.bound));
    const domain = BOUNDS.filter((b) => seen.has(b));
    return {domain, range: domain.map((b) => BOUND_COLORS[BOUNDS.indexOf(b)]), legend: true};
  };
  const LOG_TICKS = "~g";  // 0.1, 2, 300 rather than SI prefixes (100m)
  const num = (v) => (typeof v === "number" && isFinite(v) ? v : null);
  const fmt = (v, d) => (num(v) === null ? "-" : v.toFixed(d));

  // The width a chart gets: its box's, so that nothing overflows from 800 px up.
  function width() {
    return Math.max(280, Math.floor(root.clientWidth));
  }

  function figure(id, title, note) {
    const f = document.createElement("figure");
    f.dataset.chart = id;
    const h = document.createElement("h2");
    h.textContent = title;
    f.appendChild(h);
    if (note) {
      const p = document.createElement("p");
      p.className = "note";
      p.textContent = note;
      f.appendChild(p);
    }
    root.appendChild(f);
    return f;
  }

  // ---- a prediction (predict, and advise's baseline)

  // Ops as points (x = FLOP per DRAM byte, y = achieved TFLOP/s, area = time, colour = bound) under the pipe's
  // peak and the DRAM bandwidth's slope, one panel per pipe the ops ran on. Ops without FLOPs, bytes or time
  // have no place on log axes and are left out (the tables list them).
  function roofline(p) {
    const ops = (p.ops || []).filter((o) => o.flops > 0 && o.bytes > 0 && o.time_ms > 0);
    if (!ops.length || !p.roofline) return;
    const f = figure("roofline", L.roofline, L.size_note);
    const facets = document.createElement("div");
    facets.className = "facets";
    f.appendChild(facets);
    const pipes = [...new Set(ops.map((o) => o.pipe))];
    const w = pipes.length > 1 ? Math.max(280, Math.floor((width() - 16) / 2)) : width();
    const maxTime = Math.max(...ops.map((o) => o.time_ms));
    for (const pipe of pipes) {
      const mine = ops.filter((o) => o.pipe === pipe);
      const peak = (p.roofline.peak_tflops || {})[pipe] || 0;
      const bw = p.roofline.dram_gbps || 0;  // GB/s = 1e-3 TB/s: TFLOP/s = intensity * bw / 1000
      const xs = mine.map((o) => o.flops / o.bytes);
      const lo = Math.min(...xs) / 2, hi = Math.max(...xs) * 2;
      const ridge = peak > 0 && bw > 0 ? (peak * 1000) / bw : null;
      const x0 = Math.min(lo, ridge ? ridge / 4 : lo), x1 = Math.max(hi, ridge ? ridge * 4 : hi);
      const ceiling = [];
      for (let i = 0; i <= 60; ++i) {
        const x = x0 * Math.pow(x1 / x0, i / 60);
        const y = Math.min(peak > 0 ? peak : Infinity, bw > 0 ? (x * bw) / 1000 : Infinity);
        if (isFinite(y)) ceiling.push({x, y});
      }
      const chart = Plot.plot({
        width: w,
        height: Math.round(Math.min(420, w * 0.62)),
        marginLeft: 56,
        grid: true,
        subtitle: `${pipe} (${p.precision})`,
        x: {type: "log", label: L["ax.intensity"], domain: [x0, x1], tickFormat: LOG_TICKS},
        y: {type: "log", label: L["ax.tflops"], tickFormat: LOG_TICKS},
        r: {domain: [0, maxTime], range: [0, 14]},
        color: boundColor(ops),
        marks: [
          Plot.line(ceiling, {x: "x", y: "y", stroke: "#444", strokeWidth: 1.5, ariaDescription: "roofline-ceiling"}),
          Plot.dot(mine, {
            x: (o) => o.flops / o.bytes,
            y: (o) => o.flops / (o.time_ms * 1e9),
            r: "time_ms",
            fill: "bound",
            fillOpacity: 0.75,
            stroke: "white",
            strokeWidth: 0.5,
            title: (o) => `${o.name} (${o.kind})\n${fmt(o.time_ms, 3)} ms, ${o.bound}\n` +
                          `${fmt(o.flops / 1e9, 2)} GFLOP, ${fmt(o.bytes / 1e6, 2)} MB`,
            ariaDescription: "roofline-point"
          })
        ]
      });
      facets.appendChild(chart);
    }
  }

  // The step by op class, stacked by bound; then host dispatch against GPU time.
  function breakdown(p) {
    const ops = (p.ops || []).filter((o) => o.time_ms > 0);
    if (!ops.length) return;
    const f = figure("breakdown", L.breakdown);
    const cells = new Map();
    for (const o of ops) {
      const k = o.kind + "|" + o.bound;
      cells.set(k, (cells.get(k) || 0) + o.time_ms);
    }
    const rows = [...cells].map(([k, t]) => ({kind: k.split("|")[0], bound: k.split("|")[1], time_ms: t}));
    const kinds = [...new Set(rows.map((r) => r.kind))];
    kinds.sort((a, b) => rows.filter((r) => r.kind === b).reduce((s, r) => s + r.time_ms, 0) -
                         rows.filter((r) => r.kind === a).reduce((s, r) => s + r.time_ms, 0));
    f.appendChild(Plot.plot({
      width: width(),
      height: 40 + 26 * kinds.length,
      marginLeft: 90,
      x: {label: L["ax.time_ms"], grid: true},
      y: {domain: kinds, label: null},
      color: boundColor(rows),
      marks: [
        Plot.barX(rows, {x: "time_ms", y: "kind", fill: "bound", title: (r) => `${r.kind}, ${r.bound}: ${fmt(r.time_ms, 3)} ms`,
                         ariaDescription: "breakdown-bar"}),
        Plot.ruleX([0])
      ]
    }));
    if (num(p.gpu_busy_ms) === null) return;
    const g = figure("host_gpu", L.host_gpu);
    const lanes = [
      {lane: "host", ms: p.host_dispatch_ms || 0},
      {lane: "GPU", ms: p.gpu_busy_ms},
      {lane: L.step, ms: p.step_ms || 0}
    ];
    g.appendChild(Plot.plot({
      width: width(),
      height: 130,
      marginLeft: 90,
      marginRight: 80,
      x: {label: L["ax.time_ms"], grid: true},
      y: {label: null, domain: lanes.map((l) => l.lane)},
      marks: [
        Plot.barX(lanes, {x: "ms", y: "lane", fill: (l) => (l.lane === "host" ? "#b07aa1" : l.lane === "GPU" ? "#4e79a7" : "#999"),
                          title: (l) => `${l.lane}: ${fmt(l.ms, 2)} ms`, ariaDescription: "host-gpu-bar"}),
        Plot.text(lanes, {x: "ms", y: "lane", text: (l) => `${fmt(l.ms, 2)} ms`, dx: 4, textAnchor: "start"}),
        Plot.ruleX([0])
      ]
    }));
  }

  // Memory parts stacked against the card's capacity (a vertical rule).
  // `keys`: the parts of p.memory drawn, each as m[key + "_bytes"] (a prediction's by default; serve passes its own).
  function memory(p, keys = ["weights", "gradients", "optimizer_state", "activations", "workspace", "runtime",
                             "comm_buffers"]) {
    const m = p.memory;
    if (!m || !(m.capacity_bytes > 0)) return;
    const f = figure("memory", L.memory);
    const GiB = 1024 * 1024 * 1024;
    const parts = keys.map((k) => ({part: k, gib: (m[k + "_bytes"] || 0) / GiB, row: L["ax.gib"]}))
                      .filter((r) => r.gib > 0);
    const cap = m.capacity_bytes / GiB;
    f.appendChild(Plot.plot({
      width: width(),
      height: 160,
      marginLeft: 20,
      marginTop: 30,
      x: {label: L["ax.gib"], grid: true, domain: [0, Math.max(cap, m.total_bytes / GiB) * 1.05]},
      y: {axis: null},
      color: {legend: true, scheme: "tableau10"},
      marks: [
        Plot.barX(parts, {x: "gib", y: "row", fill: "part", title: (r) => `${r.part}: ${fmt(r.gib, 2)} GiB`,
                          ariaDescription: "memory-bar"}),
        Plot.ruleX([cap], {stroke: m.fits ? "#222" : "#d62728", strokeWidth: 2, ariaDescription: "memory-capacity"}),
        Plot.text([cap], {x: (d) => d, frameAnchor: "top", text: () => `${L.capacity} ${fmt(cap, 1)} GiB`, dy: -2,
                          textAnchor: "end", dx: -4})
      ]
    }));
  }

  // Lanes of one step (host dispatch, GPU kernels, communication, input) as bars from start to end.
  function timeline(segments, title) {
    if (!segments || !segments.length) return;
    const f = figure("timeline", title);
    const lanes = [...new Set(segments.map((s) => s.lane))];
    f.appendChild(Plot.plot({
      width: width(),
      height: 50 + 32 * lanes.length,
      marginLeft: 100,
      x: {label: L["ax.time_ms"], grid: true},
      y: {domain: lanes, label: null},
      color: {legend: true, scheme: "set2"},
      marks: [
        Plot.barX(segments, {x1: "start_ms", x2: "end_ms", y: "lane", fill: "phase", insetLeft: 0.5,
                             title: (s) => `${s.lane} ${s.phase}: ${fmt(s.start_ms, 2)}-${fmt(s.end_ms, 2)} ms`,
                             ariaDescription: "timeline-segment"})
      ]
    }));
  }

  function prediction(p) {
    roofline(p);
    breakdown(p);
    memory(p);
    timeline(p.timeline, L.timeline);
  }

  // ---- advise: the baseline's charts and the strategies' speedups on a log scale around 1x.
  function advise(a) {
    const rows = [];
    for (const list of ["strategies", "combinations"])
      for (const s of a[list] || []) if (s.applicable && s.speedup > 0) rows.push(s);
    rows.sort((x, y) => y.speedup - x.speedup);
    if (rows.length) {
      const f = figure("speedup", L.speedup);
      const lo = Math.min(0.5, ...rows.map((r) => r.speedup)) * 0.9, hi = Math.max(2, ...rows.map((r) => r.speedup)) * 1.1;
      f.appendChild(Plot.plot({
        width: width(),
        height: 40 + 20 * rows.length,
        marginLeft: Math.min(260, 12 + 7 * Math.max(...rows.map((r) => r.id.length))),
        x: {type: "log", label: L["ax.speedup"], domain: [lo, hi], grid: true, tickFormat: LOG_TICKS},
        y: {domain: rows.map((r) => r.id), label: null},
        marks: [
          Plot.barX(rows, {x1: 1, x2: "speedup", y: "id", fill: (r) => (r.speedup >= 1 ? "#4e79a7" : "#bbb"),
                           title: (r) => `${r.id}: ${fmt(r.speedup, 2)}x\n${r.reason_in_language || ""}`,
                           ariaDescription: "speedup-bar"}),
          Plot.ruleX([1], {stroke: "#222", strokeWidth: 1.5, ariaDescription: "speedup-one"}),
          Plot.text(rows, {x: (r) => Math.max(1, r.speedup), y: "id", text: (r) => `${fmt(r.speedup, 2)}x`, dx: 4,
                           textAnchor: "start", fontSize: 10})
        ]
      }));
    }
    if (a.baseline) prediction(a.baseline);
  }

  // ---- compare and plan: hours against dollars with the Pareto front, and scaling efficiency over GPU counts.

  // The options no other option beats on both time and cost, by ascending time.
  function paretoFront(points) {
    const sorted = [...points].sort((a, b) => a.hours - b.hours || a.usd - b.usd);
    const front = [];
    let best = Infinity;
    for (const p of sorted) if (p.usd < best) { front.push(p); best = p.usd; }
    return front;
  }

  function pareto(points) {
    points = points.filter((p) => p.hours > 0 && p.usd > 0);
    if (!points.length) return;
    const f = figure("pareto", L.pareto, L.front);
    const front = paretoFront(points);
    f.appendChild(Plot.plot({
      width: width(),
      height: Math.round(Math.min(420, width() * 0.55)),
      marginLeft: 60,
      marginTop: 30,
      inset: 24,
      grid: true,
      x: {type: "log", label: L["ax.hours"], tickFormat: LOG_TICKS},
      y: {type: "log", label: L["ax.usd"], tickFormat: LOG_TICKS},
      color: {legend: true},
      marks: [
        Plot.line(front, {x: "hours", y: "usd", stroke: "#222", strokeDasharray: "4 3", ariaDescription: "pareto-front"}),
        Plot.dot(points, {x: "hours", y: "usd", fill: "gpu", r: 5, stroke: "white",
                          title: (p) => `${p.label}\n${fmt(p.hours, 2)} h, $${fmt(p.usd, 2)}`, ariaDescription: "pareto-point"}),
        Plot.text(front, {x: "hours", y: "usd", text: "label", dy: -9, fontSize: 10})
      ]
    }));
  }

  function scaling(points) {
    points = points.filter((p) => num(p.efficiency) !== null && p.gpus > 0);
    const byGpu = new Map();
    for (const p of points) byGpu.set(p.gpu, (byGpu.get(p.gpu) || new Set()).add(p.gpus));
    // Only GPU types seen at more than one count make a curve.
    const shown = points.filter((p) => byGpu.get(p.gpu).size > 1);
    if (!shown.length) return;
    const f = figure("scaling", L.scaling);
    f.appendChild(Plot.plot({
      width: width(),
      height: 300,
      marginLeft: 56,
      grid: true,
      x: {type: "log", base: 2, label: L["ax.gpus"], ticks: [...new Set(shown.map((p) => p.gpus))], tickFormat: "d"},
      y: {label: L["ax.efficiency"], domain: [0, 1.05]},
      color: {legend: true},
      marks: [
        Plot.line(shown, {x: "gpus", y: "efficiency", stroke: "gpu", sort: "gpus", marker: "circle",
                          ariaDescription: "scaling-line"}),
        Plot.ruleY([1], {stroke: "#999", strokeDasharray: "3 3"})
      ]
    }));
  }

  function compare(rows) {
    const ok = (rows || []).filter((r) => r.fits && r.run);
    pareto(ok.map((r) => ({gpu: r.gpu, gpus: r.gpus_total, hours: r.run.hours, usd: r.run.usd_on_demand,
                           label: `${r.gpu} x${r.gpus_total}`})));
    // Decode and generate rows carry tokens_per_s (output tokens), what the text table and predict print for them.
    const tokens = ok.some((r) => "tokens_per_s" in r);
    const rate = tokens ? "tokens_per_s" : "samples_per_s";
    const unit = tokens ? L["ax.tokens"] : L["ax.throughput"];
    const tp = ok.filter((r) => num(r[rate]) !== null);
    if (tp.length) {
      const f = figure("throughput", unit);
      f.appendChild(Plot.plot({
        width: width(),
        height: 40 + 26 * tp.length,
        marginLeft: 170,
        x: {label: unit, grid: true},
        y: {label: null, domain: tp.map((r) => `${r.gpu} x${r.gpus_total}`)},
        marks: [Plot.barX(tp, {x: rate, y: (r) => `${r.gpu} x${r.gpus_total}`, fill: "#4e79a7",
                               title: (r) => `${fmt(r[rate], 1)} ${unit}`, ariaDescription: "throughput-bar"}),
                Plot.ruleX([0])]
      }));
    }
    // The run's energy: GPU boards at their average power, a CPU's package at TDP (its caveat under the title).
    const en = ok.filter((r) => num(r.run.energy_kwh) !== null && r.run.energy_kwh > 0);
    if (en.length) {
      const f = figure("energy", L.energy, L.energy_note);
      const watts = (r) => r.device_kind === "cpu" ? `${fmt(r.package_power_w, 0)} ${L.package_tdp}`
                                                   : `${fmt(r.avg_power_w * r.gpus_total, 0)} ${L.boards}`;
      f.appendChild(Plot.plot({
        width: width(),
        height: 40 + 26 * en.length,
        marginLeft: 170,
        x: {label: L["ax.kwh"], grid: true},
        y: {label: null, domain: en.map((r) => `${r.gpu} x${r.gpus_total}`)},
        marks: [Plot.barX(en, {x: (r) => r.run.energy_kwh, y: (r) => `${r.gpu} x${r.gpus_total}`,
                               fill: (r) => r.device_kind === "cpu" ? "#f28e2b" : "#4e79a7",
                               title: (r) => `${fmt(r.run.energy_kwh, 2)} kWh, ${watts(r)}`, ariaDescription: "energy-bar"}),
                Plot.ruleX([0])]
      }));
    }
    scaling(ok.map((r) => ({gpu: r.gpu, gpus: r.gpus_total, efficiency: r.scaling_efficiency})));
  }

  function plan(p) {
    const options = (p.options || []).filter((o) => num(o.usd_on_demand) !== null);
    pareto(options.map((o) => ({gpu: o.gpu, gpus: o.gpus_total, hours: o.hours, usd: o.usd_on_demand,
                                label: `${o.instance} x${o.count}`})));
    scaling(options.map((o) => ({gpu: o.gpu, gpus: o.gpus_total, efficiency: o.scaling_efficiency})));
  }

  // ---- validate: measured against predicted, log-log, with the 2x band and the line of agreement.
  function validate(v) {
    const rows = (v.rows || []).filter((r) => r.measured > 0 && r.predicted > 0);
    if (!rows.length) return;
    const f = figure("measured", L.measured, L.band_note);
    const all = rows.flatMap((r) => [r.measured, r.predicted]);
    const lo = Math.min(...all) / 2.5, hi = Math.max(...all) * 2.5;
    const band = [];
    for (let i = 0; i <= 40; ++i) {
      const x = lo * Math.pow(hi / lo, i / 40);
      band.push({x, y1: x / 2, y2: x * 2});
    }
    const size = Math.min(width(), 640);
    f.appendChild(Plot.plot({
      width: size,
      height: size,
      marginLeft: 60,
      grid: true,
      x: {type: "log", label: L["ax.measured"], domain: [lo, hi], tickFormat: LOG_TICKS},
      y: {type: "log", label: L["ax.predicted"], domain: [lo, hi], tickFormat: LOG_TICKS},
      color: {legend: true},
      marks: [
        Plot.areaY(band, {x: "x", y1: "y1", y2: "y2", fill: "#4e79a7", fillOpacity: 0.1, clip: true,
                          ariaDescription: "band-2x"}),
        Plot.line([{x: lo, y: lo}, {x: hi, y: hi}], {x: "x", y: "y", stroke: "#444", clip: true, ariaDescription: "agreement"}),
        Plot.dot(rows, {x: "measured", y: "predicted", fill: "gpu", r: 3.5, fillOpacity: 0.8,
                        title: (r) => `line ${r.line}: ${r.model} on ${r.gpu} (${r.runtime}, ${r.mode}, batch ${r.batch})\n` +
                                      `measured ${fmt(r.measured, 1)}, predicted ${fmt(r.predicted, 1)}`,
                        ariaDescription: "validation-point"})
      ]
    }));
  }

  // ---- trace: kernel time by class (measured, and predicted beside it), and operators measured against predicted.
  function trace(t) {
    const pred = t.prediction;
    const rows = [];
    if (pred && pred.classes) {
      for (const c of pred.classes) {
        if (c.measured_ms > 0) rows.push({cls: c.class, what: L["ax.measured"], ms: c.measured_ms});
        if (c.predicted_ms > 0) rows.push({cls: c.class, what: L["ax.predicted"], ms: c.predicted_ms});
      }
    } else {
      for (const c of t.classes || []) if (c.ms > 0) rows.push({cls: c.class, what: L["ax.measured"], ms: c.ms});
    }
    if (rows.length) {
      const f = figure("classes", pred ? L.classes : L.kernel_classes);
      const classes = [...new Set(rows.map((r) => r.cls))];
      const series = pred ? [L["ax.measured"], L["ax.predicted"]] : [L["ax.measured"]];
      f.appendChild(Plot.plot({
        width: width(),
        height: 40 + classes.length * 14 * (series.length + 1),
        marginLeft: 100,
        x: {label: L["ax.time_ms"], grid: true},
        y: {domain: series, axis: null},
        fy: {domain: classes, label: null},
        color: {legend: pred != null, domain: series, range: ["#e15759", "#4e79a7"]},
        marks: [
          Plot.barX(rows, {x: "ms", y: "what", fy: "cls", fill: "what",
                           title: (r) => `${r.cls} ${r.what}: ${fmt(r.ms, 3)} ms`, ariaDescription: "class-bar"}),
          Plot.ruleX([0])
        ]
      }));
    }
    // The first step as the trace measured it: host operators, each stream's kernels, copies; and the predicted step
    // beside it when there is one.
    const lanes = (t.timeline || []).slice();
    if (pred && pred.predicted_step_ms > 0)
      lanes.push({lane: "GPU (" + L["ax.predicted"] + ")", phase: L["ax.predicted"], start_ms: 0, end_ms: pred.predicted_step_ms});
    timeline(lanes, L.timeline);
    const ops = pred && pred.operators ? pred.operators.map((o) => ({
      name: o.name, shapes: o.shapes,
      measured: (o.measured_forward_ms || 0) + (o.measured_backward_ms || 0),
      predicted: (o.predicted_forward_ms || 0) + (o.predicted_backward_ms || 0)
    })).filter((o) => o.measured > 0 && o.predicted > 0) : [];
    if (ops.length) {
      const f = figure("ops", L.ops, L.band_note);
      const all = ops.flatMap((o) => [o.measured, o.predicted]);
      const lo = Math.min(...all) / 2.5, hi = Math.max(...all) * 2.5;
      const band = [];
      for (let i = 0; i <= 40; ++i) {
        const x = lo * Math.pow(hi / lo, i / 40);
        band.push({x, y1: x / 2, y2: x * 2});
      }
      const size = Math.min(width(), 600);
      f.appendChild(Plot.plot({
        width: size, height: size, marginLeft: 60, grid: true,
        x: {type: "log", label: L["ax.measured"] + " (ms)", domain: [lo, hi], tickFormat: LOG_TICKS},
        y: {type: "log", label: L["ax.predicted"] + " (ms)", domain: [lo, hi], tickFormat: LOG_TICKS},
        marks: [
          Plot.areaY(band, {x: "x", y1: "y1", y2: "y2", fill: "#4e79a7", fillOpacity: 0.1, clip: true}),
          Plot.line([{x: lo, y: lo}, {x: hi, y: hi}], {x: "x", y: "y", stroke: "#444", clip: true}),
          Plot.dot(ops, {x: "measured", y: "predicted", fill: "#4e79a7", r: 3.5,
                         title: (o) => `${o.name} ${o.shapes}\nmeasured ${fmt(o.measured, 3)} ms, predicted ${fmt(o.predicted, 3)} ms`,
                         ariaDescription: "operator-point"})
        ]
      }));
    }
  }

  // ---- op: the one kernel on its pipe's roofline.
  function op(k) {
    if (!(k.flops > 0 && k.bytes > 0 && k.predicted_us > 0) || !k.roofline) return;
    roofline({precision: k.precision, roofline: {dram_gbps: k.roofline.dram_gbps,
                                                 peak_tflops: {[k.roofline.pipe]: k.roofline.peak_tflops}},
              ops: [{name: k.op, kind: k.op, pipe: k.roofline.pipe, flops: k.flops, bytes: k.bytes,
                     time_ms: k.predicted_us / 1e3, bound: k.bound}]});
  }

  // ---- serve: continuous batching under load (predict --mode serve).
  // Each latency's median and 99th percentile as points joined by a line on a log axis (a 10 ms token and a 3 s
  // request both readable; a bar's length would mean nothing on a log axis), and the memory per GPU: weights, the KV
  // cache the engine reserves and its buffers, against the card's capacity.
  function serve(s) {
    const l = s.latency_ms || {};
    const metrics = [["ttft", "TTFT"], ["tpot", "TPOT"], ["e2e", "E2E"]];
    const points = metrics.flatMap(([k, name]) => ["p50", "p99"].map((q) => ({metric: name, q, ms: num(l[`${k}_${q}`])})))
      .filter((r) => r.ms !== null && r.ms > 0);
    const spans = metrics.map(([k, name]) => ({metric: name, lo: num(l[`${k}_p50`]), hi: num(l[`${k}_p99`])}))
      .filter((r) => r.lo > 0 && r.hi > 0);
    if (points.length) {
      const f = figure("latency", L.latency, L.latency_note);
      f.appendChild(Plot.plot({
        width: width(),
        height: 170,
        marginLeft: 50,
        x: {type: "log", label: L["ax.time_ms"], grid: true, tickFormat: LOG_TICKS},
        y: {label: null, domain: metrics.map(([, name]) => name)},
        color: {legend: true, domain: ["p50", "p99"], range: ["#4e79a7", "#e15759"]},
        marks: [
          Plot.link(spans, {x1: "lo", x2: "hi", y1: "metric", y2: "metric", stroke: "#999"}),
          Plot.dot(points, {x: "ms", y: "metric", fill: "q", r: 5,
                            title: (r) => `${r.metric} ${r.q}: ${fmt(r.ms, 2)} ms`, ariaDescription: "latency-point"})
        ]
      }));
    }
    // The engine sizes its KV cache to what is left, so a served model fits (predict_serving refuses one that does not).
    const m = s.memory_per_gpu;
    if (m && m.capacity_bytes > 0)
      memory({memory: {...m, total_bytes: m.weights_bytes + m.kv_cache_bytes + m.buffers_bytes, fits: true}},
             ["weights", "kv_cache", "buffers"]);
  }

  const draw = {predict: prediction, advise, compare, plan, validate, trace, op, serve}[root.dataset.page];
  function render() {
    root.replaceChildren();
    if (draw) draw(data);
  }
  render();
  // Charts take their box's width: drawn again when the window is resized.
  let last = root.clientWidth, timer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (root.clientWidth !== last) {
        last = root.clientWidth;
        render();
      }
    }, 150);
  });
})();
