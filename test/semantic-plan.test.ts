/**
 * What a semantic column writes from (its filter, text model, pools, code spaces) is built once per
 * model, not per decoded batch, and a sample's own state (values issued, a balance's counts) stays
 * its own: the same seed writes the same rows.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Decoder, Rng, type Metadata } from "../src/sdk";
import { MarginalBalance } from "../src/sdk/privacy/marginal-balance";
import { fakerPools } from "../src/sdk/semantic/pools";
import type { SemanticShape } from "../src/sdk/semantic/types";
import { analyzed, independentCodes, table } from "./rules-fixtures";

const C = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const KINDS = ["Regional", "Municipal", "County", "International", "Memorial", "Field"];

/** 400 rows: a person's first name, an airport-like code in two forms, an airport's name, a share. */
async function model(): Promise<Metadata> {
  const first = fakerPools("en").first;
  const last = fakerPools("en").last;
  return analyzed(
    table(["first_name", "code", "airport", "runways"], 400, (i, rng) => [
      first[(i * 37) % first.length],
      i % 3 === 0 ? `${C[rng.int(26)]}${rng.int(10)}${rng.int(10)}` : `${C[rng.int(26)]}${C[rng.int(26)]}${C[rng.int(26)]}`,
      `${last[(i * 53) % last.length]} ${KINDS[rng.int(KINDS.length)]} Airport`,
      1 + rng.int(4),
    ]),
  );
}

/** The semantic shapes of the metadata's columns, by column. */
function shapes(meta: Metadata): Map<string, SemanticShape> {
  const out = new Map<string, SemanticShape>();
  for (const f of meta.features) {
    const st = meta.column_stats?.[f];
    const sem = st?.type === "id" && st.id_shape?.kind === "text" ? st.id_shape.semantic : st?.type === "categorical" ? st.semantic : undefined;
    if (sem) out.set(f, sem as SemanticShape);
  }
  return out;
}

/** Counts the reads of `key` on `obj` (the value unchanged). */
function counted<T extends object>(obj: T, key: keyof T & string, reads: Map<string, number>, name: string): void {
  const value = obj[key];
  Object.defineProperty(obj, key, { get: () => (reads.set(name, (reads.get(name) ?? 0) + 1), value), enumerable: true, configurable: true });
}

/** Decodes `batches` batches of `n` rows of one sample, as a `Synthesizer` sample does; every row. */
function sample(decoder: Decoder, codes: Record<string, Int32Array>, batches: number, n: number, seed: number): string[][] {
  const rows: string[][] = [];
  for (let b = 0; b < batches; b++) {
    const part: Record<string, Int32Array> = {};
    for (const f of decoder.metadata.features) part[f] = codes[f].subarray(b * n, (b + 1) * n);
    rows.push(...decoder.decode(part, seed + b, { rowOffset: b * n, idKey: seed }).rows);
  }
  return rows;
}

test("a decoder reads a semantic column's filter, text model and code patterns once per model, not once per batch", async () => {
  const meta = await model();
  const sem = shapes(meta);
  assert.deepEqual([...sem.values()].map((s) => s.kind).sort(), ["code", "first_name", "text"], `kinds of ${[...sem.keys()]}`);
  const plain = structuredClone(meta);
  const reads = new Map<string, number>();
  for (const [f, s] of sem) {
    counted(s, "bloom", reads, `${f}.bloom`);
    if (s.text) counted(s, "text", reads, `${f}.text`);
    if (s.codes) counted(s, "codes", reads, `${f}.codes`);
  }
  const codes = independentCodes(meta, 600, 1);
  const decoder = new Decoder(meta);
  sample(decoder, codes, 1, 50, 9);
  const once = new Map(reads);
  const rows = sample(decoder, codes, 12, 50, 9);
  assert.deepEqual(Object.fromEntries(reads), Object.fromEntries(once), "no read after the first batch");
  assert.ok(once.get("first_name.bloom")! >= 1 && once.get("airport.text")! >= 1, "read on the first batch");
  // The plan carries no sample's state: another decoder of the same model, the same rows again.
  assert.deepEqual(sample(decoder, codes, 12, 50, 9), rows, "the same sample twice from one decoder");
  assert.deepEqual(sample(new Decoder(plain), codes, 12, 50, 9), rows, "the same sample from a copy of the metadata");
  const ids = rows.map((r) => r[meta.features.indexOf("code")]);
  assert.equal(new Set(ids).size, ids.length, "codes distinct across the batches");
});

test("a sample's marginal balance reads the model's marginals once per model and counts only its own rows", async () => {
  const rng = new Rng(3);
  const meta = await analyzed(table(["kind", "size"], 600, () => [rng.next() < 0.5 ? "x" : "y", rng.next() < 0.3 ? "small" : "large"]));
  const reads = new Map<string, number>();
  counted(meta, "marginals", reads, "marginals");
  counted(meta, "empirical_probs", reads, "empirical_probs");
  const first = MarginalBalance.of(meta)!;
  const once = new Map(reads);
  const pool = { columns: ["kind", "size"], rows: Array.from({ length: 40 }, (_, r) => [r % 4 === 0 ? "y" : "x", "large"]) };
  const cells = first.cells(pool);
  const before = pool.rows.map((_, r) => first.score(cells, r, 20));
  first.choose(cells, [...pool.rows.keys()], 20, 20);
  const second = MarginalBalance.of(meta)!;
  assert.deepEqual(Object.fromEntries(reads), Object.fromEntries(once), "the second sample's balance reads nothing again");
  assert.deepEqual(
    pool.rows.map((_, r) => second.score(cells, r, 20)),
    before,
    "the second balance starts with no rows kept",
  );
  assert.notDeepEqual(
    pool.rows.map((_, r) => first.score(cells, r, 20)),
    before,
    "the first balance counted its rows",
  );
});
