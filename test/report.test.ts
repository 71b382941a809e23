/**
 * `synthd report` (issue 15): the HTML quality report, opened in headless Chromium (Debian's
 * `chromium` at /usr/bin/chromium, or the executable `SYNTHD_TEST_CHROMIUM` names; `npm test`'s
 * pretest, test/prerequisites.sh, installs it when it is missing; playwright-core drives it and
 * never downloads a browser). Only the tests that open a page are here; the report's computations
 * and command-line errors, which need no browser, are test/report-data.test.ts.
 *
 * Adult is split 80/20 into TRAIN and HOLDOUT, a small model is trained on TRAIN by the real
 * server (2 epochs: the report's job is to show the figures, not to make them good) and its rows
 * are the synthetic table. The report must open without console errors or network requests, show
 * every chart as SVG with visible marks, and carry exactly the numbers `synthd evaluate --json`
 * prints for the same files.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { Synthd, Synthesizer, writeTableCsv, type Table } from "../src/sdk";
import { evaluate, independentSample } from "../src/sdk/evaluate";
import { buildReport } from "../src/sdk/report";
import { formatMetric, type MetricFormat } from "../src/sdk/report/report-format";
import { removeDir, runCli, startServer, tempDir, type ServerProcess } from "../bench/harness";

const ADULT = "/work/shared/datasets/adult.csv";
const CARS = "/work/shared/datasets/real/cars.csv";
const CHROMIUM = process.env.SYNTHD_TEST_CHROMIUM || "/usr/bin/chromium";

let dir: string;
let browser: BrowserContext;
let server: ServerProcess | undefined;
const files = { train: "", holdout: "", synth: "" };

before(async () => {
  dir = tempDir("synthd-report-");
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} does not exist: run \`npm test\` as root on Debian (its pretest installs chromium) or set SYNTHD_TEST_CHROMIUM to a Chromium executable`);
  }
  browser = await chromium.launchPersistentContext(join(dir, "chromium-profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
  await server?.kill("SIGTERM");
  removeDir(dir);
});

/** What a page did while it loaded: console messages, uncaught errors, requests, dialogs. */
interface Visit {
  page: Page;
  console: string[];
  errors: string[];
  requests: string[];
  dialogs: string[];
}

async function open(file: string): Promise<Visit> {
  const page = await browser.newPage();
  const v: Visit = { page, console: [], errors: [], requests: [], dialogs: [] };
  page.on("console", (m) => v.console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => v.errors.push(e.message));
  page.on("request", (r) => v.requests.push(r.url()));
  page.on("dialog", (d) => {
    v.dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
  return v;
}

/** Per chart: its kind, whether it holds an inline SVG, and how many data marks have a visible area. */
async function charts(page: Page): Promise<{ kind: string; svg: boolean; visibleMarks: number }[]> {
  return page.$$eval("figure.chart", (figs) =>
    figs.map((f) => {
      const svg = f.querySelector(":scope > svg");
      let visibleMarks = 0;
      svg?.querySelectorAll("g.role-mark > *").forEach((el: unknown) => {
        const b = (el as unknown as { getBBox(): { width: number; height: number } }).getBBox();
        if (b.width > 0 && b.height > 0) visibleMarks++;
      });
      return { kind: f.getAttribute("data-chart") ?? "", svg: svg !== null, visibleMarks };
    }),
  );
}

/** Every number of the page that names its source: JSON Pointer, exact value, format, text. */
async function metrics(page: Page, attr: "data-json" | "data-json-holdout"): Promise<{ pointer: string; value: string; format: string; text: string }[]> {
  return page.$$eval(`[${attr}]`, (els, a) => els.map((e) => ({ pointer: e.getAttribute(a)!, value: e.getAttribute("data-value")!, format: e.getAttribute("data-format")!, text: e.textContent! })), attr);
}

/** The value at a JSON Pointer (RFC 6901). */
function at(json: unknown, pointer: string): unknown {
  return pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], json);
}

/** Asserts every number tagged with `attr` equals the one at its pointer in `json`, and reads as formatted. */
function assertNumbersEqual(found: Awaited<ReturnType<typeof metrics>>, json: unknown, what: string): void {
  assert.ok(found.length > 0, `${what}: the page tags its numbers`);
  for (const m of found) {
    const want = at(json, m.pointer);
    assert.equal(typeof want, "number", `${what}: ${m.pointer} exists in the JSON`);
    assert.equal(Number(m.value), want, `${what}: ${m.pointer}`);
    assert.equal(m.text, formatMetric(want as number, m.format as MetricFormat), `${what}: ${m.pointer} as written`);
  }
}

test("Adult, synthetic rows from a trained model, HOLDOUT given: opens clean in Chromium, every chart drawn, the numbers of evaluate --json", async () => {
  // TRAIN / HOLDOUT: every fifth row held out.
  const lines = readFileSync(ADULT, "utf8").trimEnd().split("\n");
  const body = lines.slice(1);
  files.train = join(dir, "train.csv");
  files.holdout = join(dir, "holdout.csv");
  files.synth = join(dir, "synth.csv");
  writeFileSync(files.train, [lines[0], ...body.filter((_, i) => i % 5 !== 0)].join("\n") + "\n");
  writeFileSync(files.holdout, [lines[0], ...body.filter((_, i) => i % 5 === 0)].join("\n") + "\n");
  server = await startServer(join(dir, "store"));
  const client = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url });
  const model = await Synthesizer.fit(client, files.train, {
    config: { model_size: "small", max_epochs: 2, early_stop_patience: 0 },
    waitOptions: { pollIntervalMs: 100 },
  });
  assert.equal(await model.writeCsv(files.synth, 8000, { seed: 3 }), 8000);

  const out = join(dir, "adult.html");
  const args = [files.train, files.synth, "--holdout", files.holdout, "--target", "income"];
  const written = await runCli(["report", ...args, "-o", out]);
  assert.equal(written.code, 0, written.stderr);
  assert.match(written.stderr, /^wrote .*adult\.html \(\d+ KiB, 18 charts\)/m);
  const evaluated = await runCli(["evaluate", ...args, "--json"]);
  assert.equal(evaluated.code, 0, evaluated.stderr);
  const json = JSON.parse(evaluated.stdout) as Record<string, unknown>;
  const reference = await runCli(["evaluate", files.train, files.holdout, "--json"]);
  const referenceJson = JSON.parse(reference.stdout) as Record<string, unknown>;

  const v = await open(out);
  assert.deepEqual(v.errors, [], "no uncaught errors");
  assert.deepEqual(v.console, [], "nothing on the console");
  assert.deepEqual(v.requests, [pathToFileURL(out).href], "no request but the page itself");
  assert.equal(await v.page.locator("script").count(), 0, "no script element");

  const drawn = await charts(v.page);
  // 15 columns (none an identifier), the two pair charts, the DCR chart
  assert.deepEqual(
    drawn.map((c) => c.kind),
    [...Array(15).fill("distribution"), "pair-tvd", "pair-association", "dcr"],
  );
  for (const [k, c] of drawn.entries()) {
    assert.ok(c.svg, `chart ${k} (${c.kind}) is inline SVG`);
    assert.ok(c.visibleMarks > 0, `chart ${k} (${c.kind}) has visible marks`);
  }
  // the pair heatmaps have one cell per pair (105), twice for the association chart
  assert.ok(drawn[15].visibleMarks >= 105 && drawn[16].visibleMarks >= 210, JSON.stringify(drawn.slice(15)));

  const tagged = await metrics(v.page, "data-json");
  assertNumbersEqual(tagged, json, "evaluate --json");
  const pointers = new Set(tagged.map((m) => m.pointer));
  for (const p of [
    "/tvd/1", "/tvd/2", "/tvd/3", "/rows/real", "/rows/synthetic", "/tstr_auc", "/tstr_auc_train",
    "/privacy/closer_to_train_share", "/privacy/exact_copies_train", "/privacy/exact_copies_train_rate",
    "/privacy/exact_copies_holdout_baseline", "/privacy/exact_copies_holdout_baseline_rate",
    "/columns/0/tvd1", "/checks/0/in_range",
  ]) {
    assert.ok(pointers.has(p), `the report shows ${p}`);
  }
  const refTagged = await metrics(v.page, "data-json-holdout");
  assertNumbersEqual(refTagged, referenceJson, "evaluate REAL HOLDOUT --json");
  assert.deepEqual(
    [...new Set(refTagged.map((m) => m.pointer))].filter((p) => p.startsWith("/tvd/")),
    ["/tvd/1", "/tvd/2", "/tvd/3"],
    "the HOLDOUT reference of each accuracy",
  );
  // The summary reads as the issue asks: accuracy = 1 - average TVD, with the HOLDOUT reference.
  const summary = await v.page.locator("#summary").innerText();
  const bivariate = formatMetric((json.tvd as Record<string, number>)["2"], "accuracy");
  assert.ok(summary.toLowerCase().includes(`bivariate accuracy\n${bivariate}`), `${bivariate} under its heading in:\n${summary}`);
  assert.match(await v.page.locator("footer").innerText(), /except the DCR histograms: they show the privacy check's sample of at most 2,000 synthetic rows/);
  await v.page.close();
});

test("a table of real/ (cars: blanks, decimals, an ISO date column) against its independent baseline: every column drawn, no errors", async () => {
  const synth = await independentSample(CARS, 400, 9);
  const synthFile = join(dir, "cars-synth.csv");
  await writeTableCsv(synth, synthFile);
  const out = join(dir, "cars.html");
  const written = await runCli(["report", CARS, synthFile, "-o", out, "--title", "cars"]);
  assert.equal(written.code, 0, written.stderr);
  const v = await open(out);
  assert.deepEqual([...v.errors, ...v.console], []);
  assert.equal(v.requests.length, 1);
  const drawn = await charts(v.page);
  const evaluation = await evaluate(CARS, synthFile);
  const drawnColumns = evaluation.checks.filter((c) => c.kind !== "id").length;
  assert.deepEqual(drawn.map((c) => c.kind), [...Array(drawnColumns).fill("distribution"), "pair-tvd", "pair-association"]);
  assert.ok(drawn.every((c) => c.svg && c.visibleMarks > 0));
  const year = await v.page.locator(`#col-${evaluation.checks.findIndex((c) => c.column === "Year")}`).innerText();
  assert.match(year, /datetime/);
  assert.match(year, /\b19[78]\d\b/, "datetime bins are labelled with dates");
  const privacy = await v.page.locator("#privacy").innerText();
  assert.match(privacy, /Near-copies of real rows \(no HOLDOUT needed\)/, "without a holdout the near-copy check still runs");
  assert.match(privacy, /DCR against a HOLDOUT not run: .* Give a HOLDOUT file/s, "and the HOLDOUT check says what it needs");
  assert.match(await v.page.locator("#summary").innerText(), /not run: give a target column/i);
  await v.page.close();
});

test("values from the CSV are text: a column name and a category written as HTML neither run nor become elements", async () => {
  const script = "<script>alert(1)</script>";
  const img = `<img src=x onerror="alert(2)">`;
  const rows: string[][] = [];
  for (let i = 0; i < 90; i++) rows.push([i % 3 === 0 ? script : i % 3 === 1 ? "a&b" : img, String(i % 7), i % 2 ? "yes" : "no"]);
  const table: Table = { columns: [img, "n", "label"], rows };
  const r = await buildReport(table, table, { holdout: table, target: "label", title: `report ${script}` });
  assert.deepEqual(r.warnings, [], "every chart compiled as specified");
  assert.ok(!r.html.includes(script) && !r.html.includes("<img"), "the HTML holds no raw markup from the data");
  const file = join(dir, "xss.html");
  writeFileSync(file, r.html);
  const v = await open(file);
  assert.deepEqual(v.dialogs, [], "no script ran");
  assert.deepEqual(v.errors, []);
  assert.equal(await v.page.locator("script, img").count(), 0, "no script or img element");
  assert.equal(await v.page.title(), `report ${script}`, "the title shows the text as written");
  assert.equal(await v.page.locator("#col-0 h3").innerText(), `${img} categorical`, "the column name shows as text");
  const labels = await v.page.$$eval("#col-0 svg text", (ts) => ts.map((t) => t.textContent));
  assert.ok(labels.includes(script), "the category shows as text in the chart");
  await v.page.close();
});
