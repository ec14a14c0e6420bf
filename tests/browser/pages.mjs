// Browser test of perfcast's HTML pages (docs/charts.md), run by ctest as `browser_pages`:
//   node tests/browser/pages.mjs PERFCAST_BINARY OUT_DIR
// For each command with --html it writes the page with the built binary, opens it in Debian's Chromium through
// playwright-core and checks what a reader needs: no console errors, the JSON in the page is exactly the
// command's --json, each chart has one mark per item of that JSON (one roofline point per op with FLOPs, bytes and
// time; one validation point per measured row; ...), and at 1400 and 800 px the page is no wider than the window.
// Screenshots go to OUT_DIR. Exit 77 (ctest's SKIP_RETURN_CODE) when Chromium or node_modules is missing.
import {execFileSync} from "node:child_process";
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from "node:fs";
import {createRequire} from "node:module";
import {tmpdir} from "node:os";
import {dirname, join, resolve} from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const [binary, outArg] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node tests/browser/pages.mjs PERFCAST_BINARY [OUT_DIR]");
  process.exit(2);
}
const chromiumPath = process.env.PERFCAST_CHROMIUM || "/usr/bin/chromium";
if (!existsSync(chromiumPath)) {
  console.log(`SKIP: no Chromium at ${chromiumPath} (scripts/install_deps.sh installs Debian's chromium)`);
  process.exit(77);
}
let chromium;
try {
  chromium = createRequire(join(root, "package.json"))("playwright-core").chromium;
} catch {
  console.log("SKIP: node_modules has no playwright-core (run npm ci, as scripts/install_deps.sh does)");
  process.exit(77);
}
const out = resolve(outArg || join(root, "build/browser"));
mkdirSync(out, {recursive: true});

const perfcast = (args) => execFileSync(binary, args, {cwd: root, encoding: "utf8", maxBuffer: 1 << 28});
// Bars of compare's energy chart: rows that fit, with a run whose energy is known.
const energyBars = (j) => j.filter((r) => r.fits && r.run && typeof r.run.energy_kwh === "number" && r.run.energy_kwh > 0).length;
const trace = "tests/data/kineto/benchmark_result_2869224_1695835535_trace.json.gz";

// Items of the command's JSON that each chart must draw one mark for.
const positive = (v) => typeof v === "number" && v > 0;
const rooflineOps = (p) => p.ops.filter((o) => positive(o.flops) && positive(o.bytes) && positive(o.time_ms)).length;
const speedups = (a) =>
  ["strategies", "combinations"].flatMap((k) => a[k]).filter((s) => s.applicable && positive(s.speedup)).length;
const memoryParts = (p) =>
  ["weights", "gradients", "optimizer_state", "activations", "workspace", "runtime", "comm_buffers"]
    .filter((k) => positive(p.memory[k + "_bytes"])).length;

const pages = [
  {name: "predict", args: ["predict", "--gpu", "gtx-1080-ti", "--model", "resnet50", "--mode", "train", "--batch", "32"],
   marks: (j) => ({"roofline-point": rooflineOps(j), "memory-bar": memoryParts(j), "timeline-segment": j.timeline.length}),
   atLeast: {"breakdown-bar": 1, "host-gpu-bar": 3, "memory-capacity": 1, "roofline-ceiling": 1}},
  {name: "advise", args: ["advise", "--gpu", "gtx-1080-ti", "--model", "resnet50"],
   marks: (j) => ({"speedup-bar": speedups(j), "roofline-point": rooflineOps(j.baseline)}),
   atLeast: {"speedup-one": 1, "breakdown-bar": 1, "memory-capacity": 1, "timeline-segment": 1}},
  {name: "advise-zh", args: ["advise", "--gpu", "gtx-1080-ti", "--model", "nodule3d", "--lang", "zh"],
   marks: (j) => ({"speedup-bar": speedups(j), "roofline-point": rooflineOps(j.baseline)}),
   text: ["屋顶线", "加速比"]},
  {name: "compare", args: ["compare", "--model", "resnet50", "--gpu",
                           "gtx-1080-ti,gtx-1080-ti:2,gtx-1080-ti:4,v100-sxm2-16gb,a100-sxm4-40gb,a100-sxm4-40gb:4"],
   marks: (j) => ({"pareto-point": j.filter((r) => r.fits && r.run && positive(r.run.hours) && positive(r.run.usd_on_demand)).length,
                   "throughput-bar": j.filter((r) => r.fits && r.run && typeof r.samples_per_s === "number").length,
                   "energy-bar": energyBars(j)}),
   atLeast: {"pareto-front": 1, "scaling-line": 1}},
  // A CPU row's energy is its package at TDP: it gets its bar, and the chart says what it leaves out.
  {name: "compare-cpu", args: ["compare", "--model", "resnet50", "--batch", "32", "--device", "gtx-1080-ti,xeon-e5-2690-v4-2s"],
   marks: (j) => ({"energy-bar": energyBars(j), "throughput-bar": j.filter((r) => r.fits && r.run).length}),
   text: ["package at TDP", "not DRAM"]},
  {name: "plan", args: ["plan", "--model", "resnet50", "--deadline", "24h", "--epochs", "10"],
   marks: (j) => ({"pareto-point": j.options.filter((o) => positive(o.hours) && positive(o.usd_on_demand)).length}),
   atLeast: {"pareto-front": 1}},
  {name: "validate", args: ["validate", "data/validation/check_pascal.csv"],
   marks: (j) => ({"validation-point": j.rows.filter((r) => positive(r.measured) && positive(r.predicted)).length}),
   atLeast: {"band-2x": 1, "agreement": 1}},
  {name: "trace", args: ["trace", trace],
   marks: (j) => ({"class-bar": j.classes.filter((c) => positive(c.ms)).length,
                   "timeline-segment": j.timeline.length + (j.prediction ? 1 : 0)})},
  {name: "serve", args: ["predict", "--mode", "serve", "--gpu", "h100-sxm5-80gb", "--model", "llama-3-8b", "--engine", "vllm",
                         "--input-len", "1024", "--output-len", "256", "--request-rate", "8"],
   marks: (j) => ({"latency-point": ["ttft", "tpot", "e2e"].flatMap((k) => ["p50", "p99"].map((q) => j.latency_ms[`${k}_${q}`]))
                                     .filter(positive).length,
                   "memory-bar": ["weights_bytes", "kv_cache_bytes", "buffers_bytes"].filter((k) => positive(j.memory_per_gpu[k])).length}),
   atLeast: {"memory-capacity": 1}},
  {name: "op", args: ["op", "--gpu", "a100-sxm4-40gb", "--op", "matmul", "--m", "4096", "--n", "4096", "--k", "4096",
                      "--precision", "fp16"],
   marks: () => ({"roofline-point": 1}), atLeast: {"roofline-ceiling": 1}},
];

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
};

const profile = mkdtempSync(join(tmpdir(), "perfcast-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let checked = 0;
try {
  for (const spec of pages) {
    const file = join(out, `${spec.name}.html`);
    perfcast([...spec.args, "--html", file]);
    const json = JSON.parse(perfcast([...spec.args, "--json"]));
    const expected = spec.marks(json);
    for (const width of [1400, 800]) {
      const page = await context.newPage();
      const errors = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      page.on("pageerror", (e) => errors.push(String(e)));
      // The page must work offline: any request it makes is a failure.
      await page.route("**/*", (route) =>
        route.request().url().startsWith("file:") ? route.continue() : (errors.push("request " + route.request().url()), route.abort()));
      await page.setViewportSize({width, height: 900});
      await page.goto(pathToFileURL(file).href, {waitUntil: "load"});
      const where = `${spec.name} at ${width} px`;
      check(errors.length === 0, `${where}: console errors: ${errors.join(" | ")}`);
      const embedded = await page.evaluate(() => JSON.parse(document.getElementById("perfcast-data").textContent));
      check(JSON.stringify(embedded) === JSON.stringify(json), `${where}: the page's JSON is not the command's --json`);
      const count = (mark) => page.evaluate((m) =>
        document.querySelectorAll(`g[aria-description="${m}"] :is(circle, rect, path, line)`).length, mark);
      for (const [mark, n] of Object.entries(expected)) {
        const got = await count(mark);
        check(got === n && n > 0, `${where}: ${got} ${mark} marks, expected ${n}`);
      }
      for (const [mark, n] of Object.entries(spec.atLeast || {})) {
        const got = await count(mark);
        check(got >= n, `${where}: ${got} ${mark} marks, expected at least ${n}`);
      }
      for (const t of spec.text || []) {
        const has = await page.evaluate((s) => document.getElementById("charts").textContent.includes(s), t);
        check(has, `${where}: the charts do not say "${t}"`);
      }
      const size = await page.evaluate(() => ({scroll: document.documentElement.scrollWidth, view: window.innerWidth}));
      check(size.scroll <= size.view, `${where}: page is ${size.scroll} px wide in a ${size.view} px window`);
      await page.screenshot({path: join(out, `${spec.name}-${width}.png`), fullPage: true});
      await page.close();
      ++checked;
    }
  }
} finally {
  await context.close();
  rmSync(profile, {recursive: true, force: true});
}
for (const f of failures) console.log("FAIL " + f);
console.log(`browser pages: ${checked} page views checked, ${failures.length} failed; screenshots in ${out}`);
process.exit(failures.length ? 1 : 0);
