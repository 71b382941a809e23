/**
 * SDK decoding (codes -> values) and the encode -> decode round trip: point bins exact, quantile
 * draws inside their bin, integers stay integers, blanks stay blanks, deterministic per seed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { APIError, Decoder, OTHER, analyzeTable, decodeCodes, type Analysis } from "../src/sdk";

const ADULT = "/work/shared/datasets/adult.csv";
const dir = mkdtempSync(join(tmpdir(), "synthd-sdk-dec-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

function columnsOf(a: Analysis): Record<string, ArrayLike<number>> {
  const out: Record<string, ArrayLike<number>> = {};
  a.columns.forEach((c, f) => (out[c] = a.codes[f]));
  return out;
}

/** A table with every kind of column: point-binned ints, quantile-binned ints and floats, categories, blanks. */
function mixedCsv(): string {
  const lines = ["id,small,big,real,cat,sparse"];
  for (let i = 0; i < 400; i++) {
    const small = i % 7 === 0 ? "" : String((i * 3) % 5);
    const big = String(((i * 7919) % 1000) - 300);
    const real = i % 11 === 0 ? "" : ((i * 0.37) % 50).toFixed(3);
    const cat = ["a", "b", "c"][(i * i) % 3];
    const sparse = i % 3 === 0 ? "" : i % 100 === 1 ? "rare" + i : "common";
    lines.push([i, small, big, real, cat, sparse].join(","));
  }
  const p = join(dir, "mixed.csv");
  writeFileSync(p, lines.join("\n") + "\n");
  return p;
}

test("encode -> decode round trip: exact point bins, draws inside quantile bins, integers and blanks kept", async () => {
  const path = mixedCsv();
  const a = await analyzeTable(path, { binCap: 16, categoryCap: 3 });
  const m = a.metadata;
  assert.equal(m.column_stats!.id.type, "id", "0..399, all distinct: an identifier");
  assert.deepEqual(m.column_stats!.id.id_shape, { kind: "integer", min: 0, max: 399, distinct: 400 });
  assert.equal(m.column_stats!.real.decimals, 3);
  assert.equal(m.column_stats!.big.type, "numerical");
  assert.ok(m.column_stats!.big.bin_edges, "big is quantile-binned");
  assert.ok(m.column_stats!.real.bin_edges, "real is quantile-binned");
  assert.equal(m.column_stats!.small.bin_edges, undefined, "small is point-binned");
  assert.ok(a.codecs.find((c) => c.name === "sparse")!.otherCode >= 0, "sparse has an __other__ code");
  const { rows } = new Decoder(m).decode(columnsOf(a), 123);
  const sparse = a.codecs.find((c) => c.name === "sparse")!;
  const ownSparse = Object.keys(sparse.mapping).filter((v) => v !== OTHER && v !== "");
  const original = (await import("node:fs")).readFileSync(path, "utf8").trim().split("\n").slice(1).map((l) => l.split(","));
  assert.equal(rows.length, original.length);
  const idIdx = a.columns.indexOf("id");
  assert.equal(new Set(rows.map((row) => row[idIdx])).size, rows.length, "identifiers are distinct within the sample");
  rows.forEach((row, r) => {
    a.codecs.forEach((codec, f) => {
      const v = row[f];
      if (a.codes[f][r] === codec.otherCode) {
        assert.ok(ownSparse.includes(v), `row ${r}: the pooled code decodes to one of the column's own values, not ${v}`);
      } else {
        assert.equal(codec.encode(v), a.codes[f][r], `row ${r} ${codec.name}: "${v}" re-encodes to the same code`);
      }
      const orig = original[r][f];
      if (orig === "") assert.equal(v, "", "blank stays blank");
      else assert.notEqual(v, "", "non-blank stays non-blank");
      if (codec.name === "small" || codec.name === "cat") assert.equal(v, orig, "point bins and categories are exact");
      if (codec.name === "big") {
        assert.match(v, /^-?\d+$/, "integer column decodes to integers");
        const st = m.column_stats![codec.name];
        assert.ok(Number(v) >= st.min! && Number(v) <= st.max!);
      }
      if (codec.name === "id") {
        assert.match(v, /^\d+$/);
        assert.ok(Number(v) > 399, "the real ids fill 0..399, so fresh ids come from above it");
      }
      if (codec.name === "real" && v !== "") assert.match(v, /^\d+(\.\d{1,3})?$/, "at most the column's 3 decimals");
      if (codec.name === "sparse" && codec.encode(orig) !== codec.otherCode) assert.equal(v, orig);
    });
  });
});

test("decoding is deterministic per seed and varies with the seed", async () => {
  const a = await analyzeTable(mixedCsv(), { binCap: 16 });
  const cols = columnsOf(a);
  const d = new Decoder(a.metadata);
  assert.deepEqual(d.decode(cols, 5), d.decode(cols, 5));
  assert.deepEqual(decodeCodes(a.metadata, cols, 5), d.decode(cols, 5));
  const realIdx = a.columns.indexOf("real");
  const x = d.decode(cols, 5).rows.map((r) => r[realIdx]);
  const y = d.decode(cols, 6).rows.map((r) => r[realIdx]);
  assert.notDeepEqual(x, y);
});

test("adult.csv: decoding its own codes re-encodes to the same codes in every cell", async () => {
  const a = await analyzeTable(ADULT);
  // Without the row rules: the few real rows that break a structural zero would be rewritten
  // (rules-general.test.ts); this is the decoder's inverse of the encoding alone.
  const { columns, rows } = new Decoder({ ...a.metadata, rules: undefined }).decode(columnsOf(a), 2024);
  assert.deepEqual(columns, a.columns);
  let checked = 0;
  for (let r = 0; r < rows.length; r++) {
    for (let f = 0; f < columns.length; f++) {
      const code = a.codes[f][r];
      const back = a.codecs[f].encode(rows[r][f]);
      // The pooled code (values seen once, e.g. Holand-Netherlands) decodes to one of the column's own values.
      const ok = code === a.codecs[f].otherCode ? back >= 0 && back !== code && back !== a.codecs[f].missingCode : back === code;
      if (!ok) assert.fail(`row ${r} ${columns[f]}: ${rows[r][f]}`);
      checked++;
    }
  }
  assert.equal(checked, 32561 * 15);
  const ageIdx = columns.indexOf("age");
  assert.ok(rows.every((row) => /^\d+$/.test(row[ageIdx]) && Number(row[ageIdx]) >= 17 && Number(row[ageIdx]) <= 90));
});

test("metadata without value mappings decodes codes as strings; bad codes are API errors", () => {
  const meta = { features: ["a", "b"], cardinalities: { a: 3, b: 2 }, empirical_probs: { a: [0.2, 0.3, 0.5], b: [0.5, 0.5] }, value_mappings: { b: { yes: 0, no: 1 } } };
  const d = new Decoder(meta);
  assert.deepEqual(d.decode({ a: [0, 2], b: [1, 0] }, 1).rows, [["0", "no"], ["2", "yes"]]);
  assert.throws(() => d.decode({ a: [0], b: [5] }, 1), (e: unknown) => e instanceof APIError && /code 5/.test(e.message));
  assert.throws(() => d.decode({ a: [0] }, 1), (e: unknown) => e instanceof APIError && /no column for feature "b"/.test(e.message));
});
