/**
 * Real tables as people have them (`../shared/datasets/real/*.csv` and UCI Adult) through the SDK
 * and the real server: the column kinds the SDK infers for the columns a user would look at
 * (`analyzeTable`), then fit -> sample as many rows as the table (at most 20,000) -> `evaluate`,
 * and every column's checks against the acceptance targets of `bench/tables.ts`
 * (`CHECK_TARGETS`): datetime parse >= 0.98, in_format >= 0.98, in_range >= 0.99; numerical
 * precision >= 0.98, in_range >= 0.99; categorical known >= 0.99; id copies <= 0.10, distinct >=
 * 0.90, shape >= 0.90; every column |blank_synthetic - blank_real| <= 0.05.
 *
 * Training is kept short ({@link FAST}: the small model, 3 epochs of 50 steps): the checks are
 * about decoding (formats, ranges, precision, known values, fresh identifiers) and 1-way blank
 * shares, which calibrated generation matches after a few hundred steps; fidelity (2-way TVD)
 * is the benchmark's job (`npm run bench -- tables`). One server and one org for the file, with a
 * live key: the near-copy filter's draws are charged too, so the six samples (57,097 rows) can
 * pass the sandbox's fixed 100,000 rows a month.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Synthd, Synthesizer, type ModelConfigInput } from "../../src/sdk";
import { evaluate } from "../../src/sdk/evaluate";
import { analyzeTable } from "../../src/sdk/metadata/metadata";
import type { ColumnStats } from "../../src/contract";
import { removeDir, startServer, tempDir, type ServerProcess } from "../../bench/harness";
import { LmdbStore as Store } from "../../src/store";
import { MAX_ROWS, TABLES, TVD_OPTIONS, checkFailures } from "../../bench/tables";

/** A short training run: enough for the 1-way blank shares, far from converged. */
const FAST: ModelConfigInput = { model_size: "small", max_epochs: 3, early_stop_patience: 0 };

/** What a user checks of a column's inferred kind: the kind and some of its `column_stats`. */
type Expected = { kind: ColumnStats["type"] } & Partial<Pick<ColumnStats, "format" | "granularity" | "decimals" | "integer" | "missing">>;

/** Per table, the columns a user would check and what the SDK must infer for them. */
const EXPECTED_KINDS: Record<string, Record<string, Expected>> = {
  airports: {
    iata: { kind: "id" }, // 3,376 distinct codes such as 00M: identifiers
    city: { kind: "categorical" },
    state: { kind: "categorical" },
    latitude: { kind: "numerical", decimals: 8, integer: false },
    longitude: { kind: "numerical", decimals: 8, integer: false },
  },
  cars: {
    Name: { kind: "categorical" }, // many unique names, but repeats (e.g. "ford pinto") get codes
    Miles_per_Gallon: { kind: "numerical", decimals: 1, missing: 8 },
    Cylinders: { kind: "numerical", integer: true, decimals: 0 },
    Horsepower: { kind: "numerical", integer: true, missing: 6 },
    Year: { kind: "datetime", format: "yyyy-MM-dd", granularity: "year" },
    Origin: { kind: "categorical" },
  },
  flights: {
    date: { kind: "datetime", format: "yyyy/MM/dd HH:mm", granularity: "minute" },
    delay: { kind: "numerical", integer: true, decimals: 0 },
    distance: { kind: "numerical", integer: true },
    origin: { kind: "categorical" },
    destination: { kind: "categorical" },
  },
  github: {
    time: { kind: "datetime", format: "yyyy/MM/dd HH:mm:ss", granularity: "hour" },
    count: { kind: "numerical", integer: true },
  },
  species: {
    item_id: { kind: "categorical" }, // hex object ids, but 4 values repeated 3,090 times each
    gap_species_code: { kind: "categorical" },
    county_id: { kind: "categorical" }, // FIPS codes with leading zeros (01001) are text
    habitat_yearround_pct: { kind: "numerical", decimals: 4, integer: false },
  },
  adult: {
    age: { kind: "numerical", integer: true },
    fnlwgt: { kind: "numerical", integer: true }, // 21,648 distinct in 32,561 rows: not an identifier
    workclass: { kind: "categorical", missing: 0 }, // `?` is a value, not a blank
    "native-country": { kind: "categorical" },
    income: { kind: "categorical" },
  },
};

let server: ServerProcess;
let dir: string;
let client: Synthd;

before(async () => {
  dir = tempDir();
  const setup = new Store(join(dir, "store"));
  const apiKey = await setup.createKey("real", "live");
  await setup.setOrgLimits("real", { live_quota: 1_000_000_000 });
  await setup.close();
  server = await startServer(join(dir, "store"));
  client = new Synthd({ apiKey, baseUrl: server.url });
});

after(async () => {
  await server?.kill("SIGTERM");
  removeDir(dir);
});

for (const [name, file] of Object.entries(TABLES)) {
  test(`${name}: inferred kinds; fit, sample and every column check meets its target`, async () => {
    const analysis = await analyzeTable(file);
    for (const [column, want] of Object.entries(EXPECTED_KINDS[name])) {
      const codec = analysis.codecs.find((c) => c.name === column);
      assert.ok(codec, `${name} has a column "${column}"`);
      const got = { kind: codec.kind, ...Object.fromEntries(Object.keys(want).filter((k) => k !== "kind").map((k) => [k, codec.stats[k as keyof ColumnStats]])) };
      assert.deepEqual(got, want, `${name}.${column}: inferred ${JSON.stringify(got)}`);
    }

    const n = Math.min(analysis.n, MAX_ROWS);
    const synth = await Synthesizer.fit(client, file, { config: FAST, waitOptions: { pollIntervalMs: 100 } });
    assert.equal(synth.model.status, "ready");
    const out = join(dir, `${name}.csv`);
    assert.equal(await synth.writeCsv(out, n, { seed: 7 }), n);
    assert.deepEqual(readFileSync(out, "utf8").slice(0, 4096).split("\n")[0].split(","), analysis.columns, "the real header");

    // With the model's metadata: a column that writes its rare values fresh is checked as fresh, not as known.
    const report = await evaluate(file, out, { ...TVD_OPTIONS, metadata: synth.metadata });
    assert.equal(report.rows.synthetic, n);
    assert.deepEqual(
      report.checks.map((c) => [c.column, c.kind]),
      analysis.codecs.map((c) => [c.name, c.kind]),
      "one check per real column, of the kind the SDK inferred",
    );
    const failures = checkFailures(report.checks).map(
      (f) => `${f.column} [${f.kind}] ${f.check} = ${f.value === undefined ? "not reported" : f.value.toFixed(4)} (target ${f.target})`,
    );
    assert.deepEqual(failures, [], `${name}: failing column checks:\n${failures.join("\n")}`);
  });
}
