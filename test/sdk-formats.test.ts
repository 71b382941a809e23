/**
 * Output formats (issue 13, `src/sdk/io/formats.ts`, `columnar.ts`, `typed.ts`, `io/parquet`):
 * `writeFile` writes Parquet and Arrow IPC files whose typed values equal the CSV of the same
 * seed, read back with readers independent of the writers: hyparquet (pure JS) for Parquet, apache-arrow's
 * `tableFromIPC` for Arrow; the CSV with csv-parse; datetimes checked with `Date.parse`, not with
 * the SDK's own parser.
 *
 * The model is a fake server (as in sdk-synthesizer.test.ts) over the metadata of a table with
 * every kind: `color` categorical (rare values pooled, blanks), `small` integer point bins
 * (blanks), `amount` 2-decimal quantile bins, `count` integer quantile bins, `day` a date
 * (`yyyy-MM-dd`, blanks), `at` an ISO datetime with UTC offsets, `stamp` `yyyy/MM/dd HH:mm`,
 * `order_id` an identifier.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { parse } from "csv-parse/sync";
import { RecordBatchFileReader, tableFromIPC, type Table as ArrowTable } from "apache-arrow";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import {
  BatchConverter,
  DataError,
  InvalidRequestError,
  Rng,
  Synthd,
  Synthesizer,
  chooseFormat,
  columnTypes,
  extractMetadata,
  formatOfPath,
  type GenerateRequest,
  type LatentSpec,
  type Metadata,
  type Model,
  type Table,
} from "../src/sdk";
import { writeTables } from "../src/sdk/io/formats";
import { outputFormat } from "../src/cli/commands/sample";
import { DATETIME_FORMATS, DatetimeFormat } from "../src/sdk/metadata/datetime";
import { datetimeParser } from "../src/sdk/columns/datetime";
import { CONFIG_DEFAULTS } from "../src/contract";
import { mulberry32 } from "./fixtures";

const dir = mkdtempSync(join(tmpdir(), "synthd-formats-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const COLUMNS = ["color", "small", "amount", "count", "day", "at", "stamp", "order_id"];
const TYPES = ["string", "int64", "float64", "int64", "date", "timestamp", "timestamp", "string"];

async function fixtureMetadata(): Promise<Metadata> {
  const u = mulberry32(5);
  const pad = (n: number): string => String(n).padStart(2, "0");
  const rows: string[][] = [];
  for (let i = 0; i < 600; i++) {
    const t = Date.UTC(2021, 0, 1) + Math.floor(u() * 90 * 24 * 60) * 60_000;
    const d = new Date(t);
    const offset = i % 3 === 0 ? "-05:30" : "+02:00";
    const local = new Date(t + (offset === "+02:00" ? 120 : -330) * 60_000);
    const iso = `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:00${offset}`;
    rows.push([
      i < 12 ? `rare${i}` : i % 17 === 0 ? "" : ["red", "blue", "green"][Math.floor(u() * 3)],
      i % 23 === 0 ? "" : String(Math.floor(u() * 6)),
      (u() * 1000).toFixed(2),
      String(1000 + Math.floor(u() * 5000)),
      i % 29 === 0 ? "" : d.toISOString().slice(0, 10),
      iso,
      `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`,
      String(500000 + i),
    ]);
  }
  return extractMetadata({ columns: COLUMNS, rows });
}

/** Fake synthd serving one ready model with `metadata`; generate draws each code from the 1-way marginal with the request's seed. */
async function fakeServer(metadata: Metadata, opts: { failAtCall?: number } = {}) {
  const now = new Date(0).toISOString();
  const model: Model = {
    id: "mdl_0123456789ab",
    status: "ready",
    config: { ...CONFIG_DEFAULTS, device: "cpu" },
    current_epoch: 1,
    train_loss: null,
    val_loss: null,
    created_at: now,
    updated_at: now,
    error: null,
  };
  const state = { generateCalls: 0 };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(payload));
      };
      const ok = (object: string, data: unknown) => send(200, { object, data, metadata: { timestamp: now } });
      if (req.method === "GET" && req.url === "/v1/models/mdl_0123456789ab") return ok("model", model);
      if (req.method === "GET" && req.url === "/v1/models/mdl_0123456789ab/metadata") return ok("model_metadata", metadata);
      if (req.method === "POST" && req.url === "/v1/models/mdl_0123456789ab/generate") {
        state.generateCalls++;
        if (state.generateCalls === opts.failAtCall) {
          return send(400, { error: { type: "invalid_request_error", code: "parameter_invalid", message: "fake failure", doc_url: "" }, request_id: "req_x" });
        }
        const g = JSON.parse(body) as GenerateRequest;
        const spec = g.embedding as LatentSpec & { seed_data?: { rows: unknown[] } };
        const n = spec.num_rows ?? spec.seed_data!.rows.length;
        const rng = new Rng(spec.seed ?? 0);
        const columns: Record<string, number[]> = {};
        for (const f of metadata.features) {
          const p = metadata.empirical_probs[f];
          columns[f] = Array.from({ length: n }, () => {
            let x = rng.next();
            for (let k = 0; k < p.length; k++) if ((x -= p[k]) < 0) return k;
            return p.length - 1;
          });
        }
        return ok("generation", { model_id: model.id, num_rows: n, features: metadata.features, columns });
      }
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const synth = await Synthesizer.fromModel(new Synthd({ apiKey: "svc_test_x", baseUrl: url, maxRetries: 0 }), model.id);
  // close drops open connections first: a request left in flight by a failed test cannot hold it open.
  return { synth, state, close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())) };
}

/** The ISO 8601 form `Date.parse` reads, of a value of `at`, `stamp` or `day`. */
function isoOf(column: string, text: string): string {
  if (column === "stamp") return text.replace(/\//g, "-").replace(" ", "T") + ":00Z";
  return text; // `at` is ISO with an offset; `day` is an ISO date (UTC midnight)
}

/**
 * What a typed reader must hold for CSV cell `text` of `column`: null for a blank; strings as
 * they are; integers as bigint; other numbers as numbers; datetimes as milliseconds since the
 * epoch of the instant `Date.parse` reads.
 */
function expected(column: string, text: string): string | bigint | number | null {
  if (text.trim() === "") return null;
  switch (TYPES[COLUMNS.indexOf(column)]) {
    case "int64":
      return BigInt(text.trim());
    case "float64":
      return Number(text);
    case "date":
    case "timestamp": {
      const ms = Date.parse(isoOf(column, text.trim()));
      assert.ok(Number.isFinite(ms), `${column}: ${text} parses`);
      return ms;
    }
    default:
      return text;
  }
}

function readCsv(path: string): string[][] {
  return parse(readFileSync(path, "utf8")) as string[][];
}

function arrayBufferOf(path: string): ArrayBuffer {
  const b = readFileSync(path);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

/** Asserts that every typed value of `get(row, column)` equals the CSV's cell. */
function assertSameValues(csv: string[][], rows: number, get: (r: number, c: string) => unknown, what: string): void {
  assert.deepEqual(csv[0], COLUMNS, `${what}: CSV header`);
  assert.equal(rows, csv.length - 1, `${what}: row count`);
  for (let r = 1; r < csv.length; r++) {
    COLUMNS.forEach((c, j) => {
      let v = get(r - 1, c);
      if (v instanceof Date) v = v.getTime();
      assert.deepEqual(v, expected(c, csv[r][j]), `${what}: row ${r}, column ${c}, CSV ${JSON.stringify(csv[r][j])}`);
    });
  }
}

function arrowGetter(t: ArrowTable): (r: number, c: string) => unknown {
  return (r, c) => t.getChild(c)!.get(r);
}

test("column types come from the metadata: strings, Int64 for integers, Float64, Date32 for dates, Timestamp(ms, UTC)", async () => {
  const meta = await fixtureMetadata();
  assert.deepEqual(
    meta.features.map((f) => meta.column_stats![f].type),
    ["categorical", "numerical", "numerical", "numerical", "datetime", "datetime", "datetime", "id"],
  );
  assert.deepEqual(
    columnTypes(meta).map((c) => c.type),
    TYPES,
  );
  const conv = new BatchConverter(meta);
  assert.deepEqual(
    conv.schema.fields.map((f) => `${f.type}`),
    ["Utf8", "Int64", "Float64", "Int64", "Date32<DAY>", "Timestamp<MILLISECOND, UTC>", "Timestamp<MILLISECOND, UTC>", "Utf8"],
  );
  const small = COLUMNS.indexOf("small");
  assert.equal(conv.value(small, "9007199254740993"), 9007199254740993n, "integers beyond 2^53 stay exact");
  assert.equal(conv.value(small, " 1e3 "), 1000n);
  assert.equal(conv.value(small, "  "), null);
  assert.throws(() => conv.value(small, "2.5"), DataError);
  assert.throws(() => conv.value(small, "9223372036854775808"), /does not fit in a 64-bit integer/);
  assert.equal(conv.value(COLUMNS.indexOf("at"), "2021-03-04T05:06:07+09:00"), BigInt(Date.parse("2021-03-03T20:06:07Z")), "the offset is applied");
  assert.equal(conv.value(COLUMNS.indexOf("day"), "1969-12-31"), -1, "Date32: days since 1970-01-01");
  assert.equal(conv.value(COLUMNS.indexOf("color"), ""), null);
  assert.equal(conv.value(COLUMNS.indexOf("color"), " red "), " red ", "strings keep their bytes");
});

test("the fast datetime reader gives DatetimeFormat.parse's answers: instants, offsets, and what it refuses", () => {
  const u = mulberry32(9);
  const formats = [...DATETIME_FORMATS, "yyyy-MM-dd'T'HH:mm:ss.SSSZZZ", "yyyyMMddHHmm", "d/M/yyyy H:m:s"];
  const offsets = [0, 120, -330, 345, -600, 840];
  const bad = ["2021-02-30", "2021-13-01", "2021-1-01", "2021-01-01T24:00", "0000-01-01", "2021-01-01T10:00-00:00", "2021-01-01T10:00+19:00", "x", ""];
  for (const format of formats) {
    const fmt = new DatetimeFormat(format);
    const fast = datetimeParser(fmt);
    // A two-digit year writes 1930..2029 only (`TWO_DIGIT_YEAR_FIRST`).
    const twoDigit = /(^|[^y])yy([^y]|$)/.test(format);
    for (let i = 0; i < 300; i++) {
      const seconds = twoDigit
        ? Math.round(-1.2e12 + u() * 3.05e12) / 1000 // years ~1932..2026
        : Math.round((u() * 2 - 0.3) * 4e12) / 1000; // years ~1843..2223, millisecond steps
      const text = fmt.write(i === 0 && !twoDigit ? -61e9 : seconds, offsets[i % offsets.length]); // and one in year 0036
      const p = fmt.parse(text)!;
      assert.equal(fast(text), Math.round(p.seconds * 1000), `${format}: ${text}`);
    }
    for (const text of [...bad, ...bad.map((b) => b.replace(/-/g, "/"))]) assert.equal(fast(text), fmt.parse(text) && Math.round(fmt.parse(text)!.seconds * 1000), `${format}: ${text}`);
  }
});

test("Parquet and Arrow hold the CSV's values of the same seed, typed, one row group or record batch per generate batch", async () => {
  const meta = await fixtureMetadata();
  const srv = await fakeServer(meta);
  try {
    const opts = { seed: 11, batchSize: 1000 };
    const csvPath = join(dir, "a.csv");
    assert.equal(await srv.synth.writeCsv(csvPath, 2500, opts), 2500);
    assert.equal(await srv.synth.writeFile(join(dir, "a.parquet"), 2500, opts), 2500);
    assert.equal(await srv.synth.writeFile(join(dir, "a.arrow"), 2500, opts), 2500);
    const csv = readCsv(csvPath);
    for (const c of ["color", "small", "day"]) {
      assert.ok(csv.some((row) => row[COLUMNS.indexOf(c)] === ""), `the sample has blanks in ${c}`);
    }

    const bytes = readFileSync(join(dir, "a.arrow"));
    assert.equal(bytes.subarray(0, 6).toString(), "ARROW1", "Arrow IPC file format (magic at the start)");
    assert.equal(bytes.subarray(bytes.length - 6).toString(), "ARROW1", "and at the end");
    const arrow = tableFromIPC(bytes);
    assert.deepEqual(
      arrow.batches.map((b) => b.numRows),
      [1000, 1000, 500],
    );
    assert.deepEqual(
      arrow.schema.fields.map((f) => `${f.name}:${f.type}`),
      COLUMNS.map((c, j) => `${c}:${["Dictionary<Int32, Utf8>", "Int64", "Float64", "Int64", "Date32<DAY>", "Timestamp<MILLISECOND, UTC>", "Timestamp<MILLISECOND, UTC>", "Utf8"][j]}`),
      "the categorical column dictionary-encoded (issue 25); the identifier plain Utf8",
    );
    assertSameValues(csv, arrow.numRows, arrowGetter(arrow), "Arrow");
    const colors = arrow.getChild("color")!.data.map((d) => d.dictionary!.toArray() as string[]);
    for (const dict of colors) assert.equal(new Set(dict).size, dict.length, "each text once in the dictionary");
    assert.ok(!colors[0].includes(""), "a blank is null, not an entry");

    const pq = arrayBufferOf(join(dir, "a.parquet"));
    const md = parquetMetadata(pq);
    assert.deepEqual(
      md.row_groups.map((g) => Number(g.num_rows)),
      [1000, 1000, 500],
    );
    const schema = new Map(md.schema.slice(1).map((e) => [e.name, e]));
    assert.deepEqual(
      COLUMNS.map((c) => [schema.get(c)!.type, schema.get(c)!.logical_type?.type ?? null]),
      [
        ["BYTE_ARRAY", "STRING"],
        ["INT64", null],
        ["DOUBLE", null],
        ["INT64", null],
        ["INT32", "DATE"],
        ["INT64", "TIMESTAMP"],
        ["INT64", "TIMESTAMP"],
        ["BYTE_ARRAY", "STRING"],
      ],
    );
    const ts = schema.get("at")!.logical_type as { unit: string; isAdjustedToUTC: boolean };
    assert.deepEqual([ts.unit, ts.isAdjustedToUTC], ["MILLIS", true]);
    assert.deepEqual(
      COLUMNS.map((c) => [schema.get(c)!.repetition_type, schema.get(c)!.converted_type ?? null]),
      [
        ["OPTIONAL", "UTF8"],
        ["OPTIONAL", null],
        ["OPTIONAL", null],
        ["OPTIONAL", null],
        ["OPTIONAL", "DATE"],
        ["OPTIONAL", "TIMESTAMP_MILLIS"],
        ["OPTIONAL", "TIMESTAMP_MILLIS"],
        ["OPTIONAL", "UTF8"],
      ],
      "every column nullable; converted types for readers older than logical types",
    );
    const objects = (await parquetReadObjects({ file: pq })) as Record<string, unknown>[];
    assertSameValues(csv, objects.length, (r, c) => objects[r][c], "Parquet");

    // Our writer (issue 25): uncompressed; the code-book columns dictionary-encoded; per row group
    // and column, null_count and min / max of the values the group holds; the Arrow schema embedded.
    let first = 0;
    for (const g of md.row_groups) {
      const rows = objects.slice(first, first + Number(g.num_rows));
      first += Number(g.num_rows);
      g.columns.forEach((chunk, j) => {
        const c = COLUMNS[j];
        const m = chunk.meta_data!;
        assert.equal(m.path_in_schema[0], c);
        assert.equal(m.codec, "UNCOMPRESSED");
        assert.equal(Number(m.num_values), rows.length);
        const values = rows.map((o) => o[c]).filter((v) => v !== null && v !== undefined);
        assert.equal(Number(m.statistics!.null_count), rows.length - values.length, `${c}: null_count`);
        const key = (v: unknown): number | bigint | string => (v instanceof Date ? v.getTime() : (v as number | bigint | string));
        const order = (a: unknown, b: unknown): number =>
          typeof a === "string" ? Buffer.compare(Buffer.from(a), Buffer.from(b as string)) : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
        const sorted = [...values].sort(order);
        assert.deepEqual([key(m.statistics!.min_value), key(m.statistics!.max_value)], [key(sorted[0]), key(sorted.at(-1))], `${c}: min / max`);
      });
      const encodings = (c: string): string[] => g.columns[COLUMNS.indexOf(c)].meta_data!.encodings;
      for (const c of ["color", "small"]) assert.ok(encodings(c).includes("RLE_DICTIONARY"), `${c}: a code-book column`);
      assert.deepEqual(encodings("order_id"), ["PLAIN", "RLE"], "identifiers: PLAIN");
    }
    assert.ok(md.key_value_metadata!.some((kv) => kv.key === "ARROW:schema"));
  } finally {
    await srv.close();
  }
});

test("Arrow dictionaries: a text a later batch brings is added by a delta, blanks are null, every reader's values are the cells", async () => {
  const meta = await fixtureMetadata();
  const row = (color: string): string[] => COLUMNS.map((c) => (c === "color" ? color : ""));
  async function* tables(): AsyncGenerator<Table> {
    yield { columns: COLUMNS, rows: ["red", "", "blue", "red"].map(row) };
    yield { columns: COLUMNS, rows: ["violet", "red", "", " red "].map(row) };
    yield { columns: COLUMNS, rows: ["blue"].map(row) };
  }
  const out = join(dir, "deltas.arrow");
  assert.equal(await writeTables(out, tables(), { format: "arrow", metadata: meta }), 9);
  const arrow = tableFromIPC(readFileSync(out));
  assert.equal(`${arrow.schema.fields[0].type}`, "Dictionary<Int32, Utf8>");
  assert.deepEqual(
    [...arrow.getChild("color")!].map((v) => v ?? null),
    ["red", null, "blue", "red", "violet", "red", null, " red ", "blue"],
  );
  assert.deepEqual(arrow.getChild("color")!.data.at(-1)!.dictionary!.toArray(), ["red", "blue", "violet", " red "], "new texts appended in the order met");
  const reader = RecordBatchFileReader.from(readFileSync(out));
  reader.open();
  assert.equal(reader.numDictionaries, 2, "one dictionary batch, then one delta");
});

test("writeFile: CSV byte-identical to writeCsv; a stream gets the file's bytes and stays open; --format beats the extension", async () => {
  const meta = await fixtureMetadata();
  const srv = await fakeServer(meta);
  try {
    const opts = { seed: 4, batchSize: 300 };
    await srv.synth.writeCsv(join(dir, "b.csv"), 700, opts);
    await srv.synth.writeFile(join(dir, "b2.csv"), 700, opts);
    await srv.synth.writeFile(join(dir, "b.txt"), 700, opts);
    const csv = readFileSync(join(dir, "b.csv"));
    assert.ok(csv.equals(readFileSync(join(dir, "b2.csv"))), "writeFile(.csv) = writeCsv");
    assert.ok(csv.equals(readFileSync(join(dir, "b.txt"))), "an unknown extension stays CSV");

    for (const format of ["parquet", "arrow"] as const) {
      const file = join(dir, `b.${format}`);
      await srv.synth.writeFile(file, 700, opts);
      const sink = new PassThrough();
      const chunks: Buffer[] = [];
      sink.on("data", (d: Buffer) => chunks.push(d));
      assert.equal(await srv.synth.writeFile(sink, 700, { ...opts, format }), 700);
      assert.ok(Buffer.concat(chunks).equals(readFileSync(file)), `${format}: the stream gets the file's bytes`);
      assert.equal(sink.writableEnded, false, "a caller's stream is left open");
    }
    await srv.synth.writeFile(join(dir, "forced.csv"), 700, { ...opts, format: "arrow" });
    assert.equal(tableFromIPC(readFileSync(join(dir, "forced.csv"))).numRows, 700, "format wins over the extension");
    assert.equal(readFileSync(join(dir, "b.parquet")).subarray(0, 4).toString(), "PAR1");
  } finally {
    await srv.close();
  }
});

test("seed tables: typed output holds the kept cells (offsets applied); a cell an integer column cannot hold fails before any request", async () => {
  const meta = await fixtureMetadata();
  const srv = await fakeServer(meta);
  try {
    const seedData = [
      { color: " red ", small: " 3 ", day: "2021-02-03", at: "2021-03-04T05:06:07+09:00" },
      { color: "", small: "", amount: "12.5" },
      { stamp: "2021/01/02 03:04", count: "999999999999" },
    ];
    await srv.synth.writeCsv(join(dir, "seeded.csv"), { seedData, seed: 3 });
    await srv.synth.writeFile(join(dir, "seeded.parquet"), { seedData, seed: 3 });
    await srv.synth.writeFile(join(dir, "seeded.arrow"), { seedData, seed: 3 });
    const csv = readCsv(join(dir, "seeded.csv"));
    assert.equal(csv[1][COLUMNS.indexOf("color")], " red ", "kept byte for byte in CSV");
    const arrow = tableFromIPC(readFileSync(join(dir, "seeded.arrow")));
    assertSameValues(csv, arrow.numRows, arrowGetter(arrow), "Arrow, seeded");
    assert.equal(arrow.getChild("small")!.get(0), 3n);
    assert.equal(arrow.getChild("at")!.get(0), Date.parse("2021-03-03T20:06:07Z"));
    const objects = (await parquetReadObjects({ file: arrayBufferOf(join(dir, "seeded.parquet")) })) as Record<string, unknown>[];
    assertSameValues(csv, objects.length, (r, c) => objects[r][c], "Parquet, seeded");

    const calls = srv.state.generateCalls;
    const bad = [{ small: "1" }, { small: "2.5" }];
    const out = join(dir, "bad-seed.parquet");
    await assert.rejects(srv.synth.writeFile(out, { seedData: bad }), (e: unknown) => {
      assert.ok(e instanceof DataError);
      assert.match(e.message, /line 3, column "small": "2\.5" is not an integer/);
      return true;
    });
    assert.equal(srv.state.generateCalls, calls, "no request was sent");
    assert.equal(existsSync(out), false, "no file was created");
    assert.equal(await srv.synth.writeCsv(join(dir, "bad-seed.csv"), { seedData: bad }), 2, "CSV keeps 2.5 as text");
  } finally {
    await srv.close();
  }
});

test("a generate failure part-way makes writeFile fail for Parquet and Arrow, and the partial file has no footer", async () => {
  const meta = await fixtureMetadata();
  for (const ext of ["parquet", "arrow"]) {
    const srv = await fakeServer(meta, { failAtCall: 2 });
    try {
      await assert.rejects(srv.synth.writeFile(join(dir, `fail.${ext}`), 2500, { seed: 1, batchSize: 1000 }), InvalidRequestError);
      assert.equal(srv.state.generateCalls, 2);
    } finally {
      await srv.close();
    }
  }
  // (parquet-wasm, the writer before issue 25, ended its output with a valid footer over the row
  // groups written: a pipeline alone would have reported success.)
  const partial = readFileSync(join(dir, "fail.parquet"));
  assert.equal(partial.subarray(0, 4).toString(), "PAR1");
  assert.notEqual(partial.subarray(partial.length - 4).toString(), "PAR1", "no footer: no reader takes it for a whole file");
  assert.throws(() => parquetMetadata(arrayBufferOf(join(dir, "fail.parquet"))));
});

test("formats by name and extension; a bad format fails before any request; the CLI refuses binary output to a terminal", async () => {
  assert.equal(formatOfPath("x/out.PARQUET"), "parquet");
  assert.equal(formatOfPath("out.pq"), "parquet");
  assert.equal(formatOfPath("out.arrow"), "arrow");
  assert.equal(formatOfPath("out.feather"), "arrow");
  assert.equal(formatOfPath("out.csv"), "csv");
  assert.equal(formatOfPath("out.tsv"), undefined);
  assert.equal(chooseFormat(new PassThrough()), "csv");
  assert.equal(chooseFormat("out.parquet", "arrow"), "arrow");
  assert.throws(() => chooseFormat("out.csv", "xlsx"), /format must be one of csv, parquet, arrow/);

  const srv = await fakeServer(await fixtureMetadata());
  try {
    await assert.rejects(srv.synth.writeFile(join(dir, "never.out"), 10, { format: "xlsx" as never }), RangeError);
    assert.equal(srv.state.generateCalls, 0);
    assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith("never")), []);
  } finally {
    await srv.close();
  }

  const tty = Object.getOwnPropertyDescriptor(process.stdout, "isTTY");
  try {
    Object.defineProperty(process.stdout, "isTTY", { value: true, configurable: true });
    assert.throws(() => outputFormat({ format: "parquet" }), /Parquet is binary and stdout is a terminal/);
    assert.equal(outputFormat({}), "csv");
    assert.equal(outputFormat({ output: "x.arrow" }), "arrow", "a file is fine");
  } finally {
    if (tty) Object.defineProperty(process.stdout, "isTTY", tty);
    else delete (process.stdout as { isTTY?: boolean }).isTTY;
  }
  assert.equal(outputFormat({ format: "parquet" }), "parquet", "stdout that is not a terminal (a pipe, a file)");
});
