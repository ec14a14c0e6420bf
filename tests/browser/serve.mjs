// Browser test of `perfcast serve` (issue 17's "done when"), run by ctest as `browser_serve`:
//   node tests/browser/serve.mjs PERFCAST_BINARY [OUT_DIR]
// Starts the server on a free port, opens its page in Debian's Chromium through playwright-core and does what a
// GP102 owner would: pick a GTX 1080 Ti and ResNet-152, read the prediction and the ranked strategies, try mixed
// precision, compare three cards against an A100, and plan a run. Checks: the page's API answers equal the CLI's
// --json for the same flags, the report frame holds the charts page, no console errors, no request leaves the
// machine, and at 1400 and 800 px the page is no wider than the window. Exit 77 when Chromium, node_modules or
// the server (built without cpp-httplib) is missing.
import {execFileSync, spawn} from "node:child_process";
import {existsSync, mkdirSync, mkdtempSync, rmSync} from "node:fs";
import {createRequire} from "node:module";
import {tmpdir} from "node:os";
import {dirname, join, resolve} from "node:path";
import {fileURLToPath} from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../..");
const [binary, outArg] = process.argv.slice(2);
if (!binary) {
  console.error("usage: node tests/browser/serve.mjs PERFCAST_BINARY [OUT_DIR]");
  process.exit(2);
}
const chromiumPath = process.env.PERFCAST_CHROMIUM || "/usr/bin/chromium";
if (!existsSync(chromiumPath)) {
  console.log(`SKIP: no Chromium at ${chromiumPath}`);
  process.exit(77);
}
let chromium;
try {
  chromium = createRequire(join(root, "package.json"))("playwright-core").chromium;
} catch {
  console.log("SKIP: node_modules has no playwright-core (npm ci)");
  process.exit(77);
}
const out = resolve(outArg || join(root, "build/browser"));
mkdirSync(out, {recursive: true});
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const cli = (args) => JSON.parse(execFileSync(binary, args, {cwd: root, encoding: "utf8", maxBuffer: 1 << 28}));

// The server prints "perfcast: serving http://HOST:PORT/" on stderr once it listens.
const server = spawn(binary, ["serve", "--port", "0"], {cwd: root, stdio: ["ignore", "ignore", "pipe"]});
const base = await new Promise((ok, fail) => {
  let err = "";
  const timer = setTimeout(() => fail(new Error("server did not start: " + err)), 30000);
  server.stderr.on("data", (d) => {
    err += d;
    const m = /serving (http:\/\/[^ ]+\/)/.exec(err);
    if (m) { clearTimeout(timer); ok(m[1]); }
  });
  server.on("exit", (code) => {
    clearTimeout(timer);
    if (code === 2 && /cpp-httplib/.test(err)) { console.log("SKIP: " + err.trim()); process.exit(77); }
    fail(new Error(`server exited ${code}: ${err}`));
  });
});

const profile = mkdtempSync(join(tmpdir(), "perfcast-serve-browser-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]});
try {
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.route("**/*", (route) => route.request().url().startsWith(base) ? route.continue()
    : (errors.push("request " + route.request().url()), route.abort()));
  await page.setViewportSize({width: 1400, height: 900});
  await page.goto(base, {waitUntil: "load"});
  await page.waitForFunction(() => document.querySelector("#gpu option") !== null, null, {timeout: 30000});

  // Pick the GP102 card and ResNet-152; the page asks the API again on every change.
  await page.selectOption("#gpu", "gtx-1080-ti");
  await page.selectOption("#model", "resnet152");
  await page.fill("input[name=batch]", "32");
  const waitFor = (text) => page.waitForFunction((t) => document.getElementById("prediction").textContent.includes(t),
                                                 text, {timeout: 60000});
  await waitFor("resnet152");
  await page.waitForFunction(() => (document.getElementById("report").srcdoc || "").includes("perfcast-data"),
                             null, {timeout: 60000});
  await page.waitForFunction(() => document.getElementById("advice").querySelectorAll("tr").length > 1, null,
                             {timeout: 60000});
  // The API round trip: what the page's form sends gives exactly the CLI's --json.
  const viaApi = await page.evaluate(async () => {
    const fd = new FormData(document.getElementById("scenario"));
    return (await fetch("/api/predict", {method: "POST", body: fd})).json();
  });
  const viaCli = cli(["predict", "--gpu", "gtx-1080-ti", "--model", "resnet152", "--batch", "32", "--mode", "train",
                      "--json"]);
  check(viaApi.throughput.samples_per_s === viaCli.throughput.samples_per_s,
        `API ${viaApi.throughput.samples_per_s} samples/s, CLI ${viaCli.throughput.samples_per_s}`);
  const shown = await page.evaluate(() => document.querySelector("#prediction .card b").textContent);
  check(Math.abs(parseFloat(shown.replace(/,/g, "")) - viaCli.throughput.samples_per_s) < 1,
        `the page shows ${shown} samples/s, the CLI ${viaCli.throughput.samples_per_s}`);

  // Mixed precision: the prediction updates to the AMP run.
  await page.selectOption("select[name=precision]", "amp");
  await page.waitForFunction((before) => document.querySelector("#prediction .card b").textContent !== before,
                             shown, {timeout: 60000});
  const amp = cli(["predict", "--gpu", "gtx-1080-ti", "--model", "resnet152", "--batch", "32", "--mode", "train",
                   "--precision", "amp", "--json"]);
  const shownAmp = await page.evaluate(() => document.querySelector("#prediction .card b").textContent);
  check(Math.abs(parseFloat(shownAmp.replace(/,/g, "")) - amp.throughput.samples_per_s) < 1,
        `AMP: the page shows ${shownAmp}, the CLI ${amp.throughput.samples_per_s}`);
  await page.selectOption("select[name=precision]", "");

  // Three cards against an A100, then a plan.
  await page.fill("#compare input[name=gpu]", "gtx-1080-ti:3,a100-sxm4-40gb");
  await page.click("#compare-run");
  await page.waitForFunction(() => document.querySelectorAll("#compare-out tr").length >= 3 ||
                                   document.getElementById("compare-error").textContent !== "", null, {timeout: 60000});
  check(await page.evaluate(() => document.getElementById("compare-error").textContent) === "", "compare failed");
  const compareRows = await page.evaluate(() => document.querySelectorAll("#compare-out tr").length);
  check(compareRows === 3, `compare shows ${compareRows} table rows, expected a header and one row per option`);
  await page.click("#plan-run");
  await page.waitForFunction(() => document.querySelectorAll("#plan-out tr").length >= 2 ||
                                   document.getElementById("plan-error").textContent !== "", null, {timeout: 120000});
  check(await page.evaluate(() => document.getElementById("plan-error").textContent) === "", "plan failed");

  for (const width of [1400, 800]) {
    await page.setViewportSize({width, height: 900});
    const size = await page.evaluate(() => ({scroll: document.documentElement.scrollWidth, view: window.innerWidth}));
    check(size.scroll <= size.view, `page is ${size.scroll} px wide in a ${size.view} px window`);
    await page.screenshot({path: join(out, `serve-${width}.png`), fullPage: true});
  }
  check(errors.length === 0, "console errors: " + errors.join(" | "));
} finally {
  await context.close();
  rmSync(profile, {recursive: true, force: true});
  server.kill();
}
if (failures.length) {
  for (const f of failures) console.error("FAIL: " + f);
  process.exit(1);
}
console.log("served page: pick, predict, amp, compare and plan all match the command line");
