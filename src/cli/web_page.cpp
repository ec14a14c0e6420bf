// The web app's one page (perfcast serve): plain HTML, CSS and JavaScript, no external resource, served from
// memory. Every change of the scenario asks /api/predict and /api/advise again; the report frame shows the
// page `perfcast predict --html` writes (/page/predict); compare and plan run on the same scenario.
#include "cli/web_server.h"

namespace perfcast::cli {

const std::string& web_app_page() {
  static const std::string page = R"PAGE(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>perfcast</title>
<style>
:root{--fg:#1b1f24;--muted:#5b6673;--line:#d7dce2;--accent:#2563eb;--bad:#b42318;--bg:#f7f8fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{padding:12px 20px;background:#fff;border-bottom:1px solid var(--line)}
header h1{margin:0;font-size:18px}
header p{margin:2px 0 0;color:var(--muted)}
main{max-width:1400px;margin:0 auto;padding:16px 20px;display:grid;gap:16px}
section{background:#fff;border:1px solid var(--line);border-radius:6px;padding:14px 16px;min-width:0}
h2{margin:0 0 10px;font-size:15px}
form.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(170px,1fr));gap:10px 14px}
label{display:flex;flex-direction:column;gap:3px;font-size:12px;color:var(--muted)}
input,select,button{font:inherit;padding:5px 7px;border:1px solid var(--line);border-radius:4px;background:#fff;color:var(--fg);min-width:0}
button{background:var(--accent);color:#fff;border:0;cursor:pointer;padding:6px 14px}
.row{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-end}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:10px}
.card{border:1px solid var(--line);border-radius:5px;padding:8px 10px}
.card b{display:block;font-size:20px}
.card span{font-size:12px;color:var(--muted)}
.error{color:var(--bad);white-space:pre-wrap}
.bar{height:10px;background:#e8ecf1;border-radius:5px;overflow:hidden}
.bar>div{height:100%;background:var(--accent)}
.bar.over>div{background:var(--bad)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.why{white-space:normal;min-width:220px}
iframe{width:100%;height:640px;border:1px solid var(--line);border-radius:5px;background:#fff}
.muted{color:var(--muted)}
.two{display:grid;grid-template-columns:repeat(auto-fit,minmax(380px,1fr));gap:16px}
</style></head><body>
<header><h1>perfcast</h1><p>Predicted training and inference performance on NVIDIA GPUs. Every number is what
<code>perfcast &lt;command&gt; --json</code> returns for the same flags (the API is <code>/api/predict</code>,
<code>/api/advise</code>, <code>/api/compare</code>, <code>/api/plan</code>, <code>/api/op</code>).</p></header>
<main>
<section><h2>Scenario</h2>
<form id="scenario" class="grid" onsubmit="return false">
<label>GPU<select name="gpu" id="gpu"></select></label>
<label>or a GPU file (.toml)<input type="file" name="gpu_file" accept=".toml"></label>
<label>Model<select name="model" id="model"></select></label>
<label>or a model file (.onnx, config.json, trace)<input type="file" name="model_file" accept=".onnx,.json,.gz"></label>
<label>Mode<select name="mode"><option>train</option><option>infer</option><option>prefill</option><option>decode</option></select></label>
<label>Runtime<select name="runtime" id="runtime"></select></label>
<label>Precision<select name="precision"><option value="">default</option><option>fp32</option><option>tf32</option>
<option>fp16</option><option>bf16</option><option>amp</option><option>amp-bf16</option><option>int8</option><option>fp8</option></select></label>
<label>Batch per GPU<input name="batch" placeholder="default" inputmode="numeric"></label>
<label>GPUs<input name="gpus" value="1" inputmode="numeric"></label>
</form></section>
<section><h2>Prediction</h2><div id="predict-error" class="error"></div><div id="prediction" class="muted">loading...</div></section>
<section><h2>Strategies: the software ones combined first, then each alone, ranked by predicted gain</h2><div id="advise-error" class="error"></div><div id="advice" class="muted">loading...</div></section>
<section><h2>Report</h2><p class="muted">The page <code>perfcast predict --html</code> writes for this scenario.</p>
<div id="page-error" class="error"></div><iframe id="report" title="perfcast predict report" sandbox="allow-scripts"></iframe></section>
<div class="two">
<section><h2>Compare GPUs</h2>
<form id="compare" class="row" onsubmit="return false">
<label style="flex:1">GPUs (id or id:count per node, comma-separated)<input name="gpu" value="gtx-1080-ti,gtx-1080-ti:3,v100-sxm2-16gb,a100-sxm4-40gb,h100-sxm5-80gb"></label>
<button id="compare-run">Compare</button></form>
<div id="compare-error" class="error"></div><div id="compare-out" class="scroll"></div></section>
<section><h2>Plan a run</h2>
<form id="plan" class="row" onsubmit="return false">
<label>Deadline<input name="deadline" value="24h"></label>
<label>Budget (USD)<input name="budget" placeholder="none"></label>
<label>Epochs<input name="epochs" value="1"></label>
<button id="plan-run">Plan</button></form>
<div id="plan-error" class="error"></div><div id="plan-out" class="scroll"></div></section>
</div>
</main>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const fmt = (v, d = 1) => (v === null || v === undefined) ? "-" : Number(v).toLocaleString("en-US", {maximumFractionDigits: d, minimumFractionDigits: d});
const gb = (b) => (b / 1e9).toFixed(1) + " GB";
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) if (k === "class") e.className = v; else e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
}
function table(headers, rows) {
  const t = el("table", {});
  t.append(el("tr", {}, ...headers.map(([h, num]) => el("th", num ? {class: "num"} : {}, h))));
  for (const r of rows) t.append(el("tr", {}, ...r.map(([v, cls]) => el("td", cls ? {class: cls} : {}, v))));
  return t;
}
// The scenario as form data; files ride along when chosen. without: field names to leave out.
function scenario(without = []) {
  const fd = new FormData($("scenario"));
  for (const name of without) fd.delete(name);
  for (const [k, v] of [...fd.entries()]) if (v instanceof File && v.size === 0) fd.delete(k);
  if (fd.get("gpu_file")) fd.delete("gpu");
  if (fd.get("model_file")) fd.delete("model");
  return fd;
}
async function call(path, body, signal) {
  const r = await fetch(path, {method: "POST", body, signal});
  const text = await r.text();
  if (!r.ok) {
    let msg = text;
    try { msg = JSON.parse(text).error; } catch (e) { /* a plain-text message */ }
    throw new Error(msg.trim());
  }
  return text;
}
function showPrediction(p) {
  const box = $("prediction");
  box.className = "";
  box.replaceChildren();
  const mem = p.memory, share = p.bottleneck ? p.bottleneck.share_of_step : {};
  const cards = el("div", {class: "cards"},
    el("div", {class: "card"}, el("b", {}, p.fits ? fmt(p.throughput.samples_per_s) : "-"), el("span", {}, "samples/s" + (p.scale_out ? " (all GPUs)" : ""))),
    el("div", {class: "card"}, el("b", {}, p.fits ? fmt(p.step_ms) : "-"), el("span", {}, "ms per step")),
    el("div", {class: "card"}, el("b", {}, gb(mem.total_bytes)), el("span", {}, "memory of " + gb(mem.capacity_bytes) + (mem.fits ? "" : ": does not fit"))),
    el("div", {class: "card"}, el("b", {}, p.bottleneck ? p.bottleneck.primary.replaceAll("_", " ") : "-"), el("span", {}, "bound by")),
    el("div", {class: "card"}, el("b", {}, p.power ? fmt(p.power.avg_power_w, 0) + " W" : "-"), el("span", {}, "average board power")));
  box.append(cards);
  const memBar = el("div", {class: "bar" + (mem.fits ? "" : " over")}, el("div", {style: "width:" + Math.min(100, 100 * mem.total_bytes / mem.capacity_bytes).toFixed(1) + "%"}));
  box.append(el("p", {}, "Memory: " + gb(mem.total_bytes) + " of " + gb(mem.capacity_bytes)), memBar);
  const rows = Object.entries(share).filter(([, v]) => v > 0.0005).sort((a, b) => b[1] - a[1])
    .map(([k, v]) => [[k.replaceAll("_", " ")], [fmt(100 * v) + "%", "num"],
                      [el("div", {class: "bar", style: "width:200px"}, el("div", {style: "width:" + (100 * v).toFixed(1) + "%"}))]]);
  if (p.bottleneck) box.append(el("p", {}, "Where the step goes (" + p.gpu + ", " + p.model + ", " + p.precision + ", batch " + p.batch + "):"),
             el("div", {class: "scroll"}, table([["bound"], ["share of step", true], [""]], rows)));
}
function showAdvice(a) {
  const box = $("advice");
  box.className = "";
  box.replaceChildren(el("p", {}, a.verdict));
  const rows = a.strategies.filter((s) => s.applicable).slice(0, 12)
    .map((s, i) => [[i + 1, "num"], [s.id], [fmt(s.speedup, 2) + "x", "num"], [fmt(s.samples_per_s), "num"], [s.reason_in_language || s.reason, "why"]]);
  box.append(el("div", {class: "scroll"}, table([["#", true], ["strategy"], ["speedup", true], ["samples/s", true], ["why"]], rows)));
}
let live = null;
async function refresh() {
  if (live) live.abort();
  live = new AbortController();
  const signal = live.signal;
  const jobs = [
    call("/api/predict", scenario(), signal).then((t) => { $("predict-error").textContent = ""; showPrediction(JSON.parse(t)); }, (e) => { if (e.name !== "AbortError") $("predict-error").textContent = e.message; }),
    call("/api/advise", scenario(), signal).then((t) => { $("advise-error").textContent = ""; showAdvice(JSON.parse(t)); }, (e) => { if (e.name !== "AbortError") $("advise-error").textContent = e.message; }),
    call("/page/predict", scenario(), signal).then((t) => { $("page-error").textContent = ""; $("report").srcdoc = t; }, (e) => { if (e.name !== "AbortError") $("page-error").textContent = e.message; }),
  ];
  await Promise.all(jobs);
}
let timer = null;
function scheduleRefresh() { clearTimeout(timer); timer = setTimeout(refresh, 250); }
async function runCompare() {
  const fd = scenario(["gpu", "gpu_file", "gpus"]);
  for (const [k, v] of new FormData($("compare"))) fd.set(k, v);
  $("compare-error").textContent = "";
  try {
    const rows = JSON.parse(await call("/api/compare", fd));
    $("compare-out").replaceChildren(table(
      [["GPU"], ["per node", true], ["precision"], ["samples/s", true], ["step ms", true], ["scaling", true], ["run time", true], ["on-demand", true], ["energy", true], ["best precision"]],
      rows.map((r) => [[r.gpu], [r.gpus_per_node, "num"], [r.precision || r.status], [r.fits ? fmt(r.samples_per_s) : (r.prediction === undefined && r.status ? "-" : "does not fit"), "num"],
                       [fmt(r.step_ms), "num"], [r.scaling_efficiency === undefined ? "-" : fmt(100 * r.scaling_efficiency, 0) + "%", "num"],
                       [r.run ? fmt(r.run.hours, 2) + " h" : "-", "num"], [r.run && r.run.usd_on_demand !== null ? "$" + fmt(r.run.usd_on_demand, 2) : "-", "num"],
                       [r.run ? fmt(r.run.energy_kwh, 2) + " kWh" : "-", "num"], [r.best_precision ? r.best_precision + " (" + fmt(r.best_samples_per_s, 0) + "/s)" : "-"]])));
  } catch (e) { $("compare-error").textContent = e.message; }
}
async function runPlan() {
  const fd = scenario(["gpu", "gpu_file", "gpus"]);
  for (const [k, v] of new FormData($("plan"))) fd.set(k, v);
  $("plan-error").textContent = "";
  try {
    const p = JSON.parse(await call("/api/plan", fd));
    const list = p.shortlist.length ? p.shortlist : (p.fastest ? [p.fastest] : []);
    const note = el("p", {class: "muted"}, p.meeting.length + " of " + p.options.length + " options finish " + fmt(p.samples, 0) +
                    " samples within " + p.deadline_hours + " h" + (p.meeting.length ? "; the shortlist:" : "; none does, the fastest:"));
    const pick = (o, names) => names.filter((n) => n in o);
    const cols = pick(list[0] || {}, ["instance", "count", "gpus_total", "precision", "samples_per_s", "scaling_efficiency", "hours", "usd_on_demand", "usd_spot", "energy_kwh"]);
    const cell = (v) => typeof v === "number" ? [fmt(v, Number.isInteger(v) ? 0 : 2), "num"] : [v === null ? "-" : String(v)];
    $("plan-out").replaceChildren(note, table(cols.map((c) => [c.replaceAll("_", " "), typeof list[0][c] === "number"]), list.map((o) => cols.map((c) => cell(o[c])))));
  } catch (e) { $("plan-error").textContent = e.message; }
}
async function init() {
  const cat = JSON.parse(await (await fetch("/api/catalog")).text());
  const fill = (sel, items, pick) => { for (const it of items) sel.append(el("option", {value: it.id}, it.id + (it.name ? " - " + it.name : ""))); sel.value = pick; };
  fill($("gpu"), cat.gpus, "gtx-1080-ti");
  fill($("model"), cat.models.map((m) => ({id: m.id})), "resnet50");
  fill($("runtime"), cat.runtimes, "pytorch");
  $("scenario").addEventListener("change", scheduleRefresh);
  $("scenario").addEventListener("input", (e) => { if (e.target.tagName === "INPUT" && e.target.type !== "file") scheduleRefresh(); });
  $("compare-run").addEventListener("click", runCompare);
  $("plan-run").addEventListener("click", runPlan);
  refresh();
}
init().catch((e) => { $("predict-error").textContent = "cannot load the catalog: " + e.message; });
</script></body></html>
)PAGE";
  return page;
}

}  // namespace perfcast::cli
