/**
 * Parquet column types as extraction reads them (docs/formats.md "Input formats"): a pandas
 * `category` column is categorical whatever its values look like; timestamps keep their
 * milliseconds (a format with fractional seconds), microseconds are read to the millisecond.
 * A file of several row groups is read by worker threads with the one-thread result. Fixtures
 * written by DuckDB (a dev dependency) into a temporary folder.
 */
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { analyzeTable } from "../src/sdk";
import { pandasCategories, parquetLayout } from "../src/sdk/io/typed-inputs";
import { tallyTable } from "../src/sdk/metadata/table-tally";
import { removeDir, tempDir } from "../bench/harness";

let dir = "";
before(() => {
  dir = tempDir("synthd-parquet-types-");
});
after(() => removeDir(dir));

/** Runs DuckDB statements (`$DIR` replaced by the temporary folder). */
async function duckdb(...sql: string[]): Promise<void> {
  const { DuckDBInstance } = require("@duckdb/node-api") as typeof import("@duckdb/node-api");
  const db = await DuckDBInstance.create(":memory:");
  const con = await db.connect();
  try {
    for (const s of sql) await con.run(s.replaceAll("$DIR", dir));
  } finally {
    con.closeSync();
  }
}

test("a pandas category column is categorical, though its values are dates; without the metadata they are datetimes", async () => {
  const pandas = JSON.stringify({
    index_columns: [],
    columns: [{ name: "quarter", field_name: "quarter", pandas_type: "categorical", numpy_type: "int8", metadata: { num_categories: 4, ordered: false } }],
  });
  const select = "SELECT i, '2024-01-0' || (i % 4 + 1) AS quarter FROM range(200) t(i)";
  await duckdb(
    `COPY (${select}) TO '$DIR/pandas.parquet' (FORMAT parquet, KV_METADATA {pandas: '${pandas}'})`,
    `COPY (${select}) TO '$DIR/plain.parquet' (FORMAT parquet)`,
  );
  const withCategory = await analyzeTable(join(dir, "pandas.parquet"));
  assert.equal(withCategory.metadata.column_stats!.quarter.type, "categorical");
  assert.deepEqual(Object.keys(withCategory.metadata.value_mappings!.quarter).sort(), ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]);
  const plain = await analyzeTable(join(dir, "plain.parquet"));
  assert.equal(plain.metadata.column_stats!.quarter.type, "datetime");
  assert.deepEqual([...pandasCategories({ key_value_metadata: [{ key: "pandas", value: pandas }] })], ["quarter"]);
  assert.equal(pandasCategories({ key_value_metadata: [{ key: "pandas", value: "{not json" }] }).size, 0);
});

test("timestamps keep their milliseconds; whole seconds stay whole; microseconds are read to the millisecond", async () => {
  const at = "'2024-01-01 10:00:00'::TIMESTAMP + i * INTERVAL 1 SECOND";
  await duckdb(
    `COPY (SELECT (${at} + i * INTERVAL 123 MILLISECOND)::TIMESTAMP_MS AS ms, ${at} AS s, ${at} + i * INTERVAL 1001 MICROSECOND AS us ` +
      `FROM range(300) t(i)) TO '$DIR/times.parquet' (FORMAT parquet)`,
  );
  const a = await analyzeTable(join(dir, "times.parquet"));
  const st = a.metadata.column_stats!;
  assert.equal(st.ms.format, "yyyy-MM-dd HH:mm:ss.SSS");
  assert.equal(st.ms.granularity, "millisecond");
  assert.equal(st.ms.max, Date.UTC(2024, 0, 1, 10, 0, 0) / 1000 + 299 * 1.123);
  assert.equal(st.s.format, "yyyy-MM-dd HH:mm:ss");
  assert.equal(st.us.format, "yyyy-MM-dd HH:mm:ss.SSS");
  assert.equal(st.us.max, Date.UTC(2024, 0, 1, 10, 0, 0) / 1000 + 299 + 0.299);
});

test("a Parquet file of several row groups read by worker threads gives the one-thread metadata, sampled or not, past the budget or not", async () => {
  await duckdb(
    "SET threads = 1",
    `COPY (SELECT i AS order_id, (['red', 'green', NULL, 'blue'])[i % 4 + 1] AS color, (i * 7919) % 1009 / 8.0 AS amount, ` +
      `('2024-01-01'::TIMESTAMP + i * INTERVAL 61 SECOND)::TIMESTAMP_MS AS at, 'w' || (i % 37) AS word FROM range(9000) t(i)) ` +
      `TO '$DIR/groups.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)`,
  );
  const path = join(dir, "groups.parquet");
  assert.ok((await parquetLayout(path)).groupRows.length >= 4);
  for (const opts of [{}, { sampleRows: 1500 }, { sampleRows: 1500, distinctBudget: 400 }]) {
    const one = await analyzeTable(path, { ...opts, threads: 0 });
    for (const threads of [2, 3]) {
      const t = await tallyTable(path, { ...opts, threads });
      await t.close();
      assert.equal(t.threads, threads);
      const a = await analyzeTable(path, { ...opts, threads });
      assert.deepEqual(JSON.parse(JSON.stringify(a.metadata)), JSON.parse(JSON.stringify(one.metadata)), `${threads} threads, ${JSON.stringify(opts)}`);
      a.codes.forEach((c, f) => assert.deepEqual(Array.from(c), Array.from(one.codes[f]), `codes of ${a.columns[f]}`));
    }
    assert.equal(one.metadata.column_stats!.at.format, "yyyy-MM-dd HH:mm:ss");
  }
});
