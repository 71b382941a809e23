/**
 * The discretised Adult table of the compute benchmarks (`bench compute`, `bench compute --device
 * gpu`, test-gpu/): metadata with every 1-way and 2-way marginal. Imports nothing beyond node:fs, so
 * the GPU benchmark and test load without the server's dependencies.
 */
import { readFileSync } from "node:fs";
import type { Metadata } from "../src/contract";

/**
 * Metadata of a discretised table (integer codes 0..K-1 per column, header row) with its domain
 * (column -> K): every 1-way marginal and every 2-way marginal.
 */
export function discreteMetadata(csvPath: string, domainPath: string): Metadata {
  const domain = JSON.parse(readFileSync(domainPath, "utf8")) as Record<string, number>;
  const lines = readFileSync(csvPath, "utf8").split(/\r?\n/).filter((l) => l.length > 0);
  const features = lines[0].split(",").map((s) => s.trim());
  const K = features.map((f) => {
    const k = domain[f];
    if (!Number.isInteger(k) || k < 1) throw new Error(`domain has no cardinality for ${f}`);
    return k;
  });
  const F = features.length;
  const rows = lines.length - 1;
  const codes = new Int32Array(rows * F);
  for (let r = 0; r < rows; r++) {
    const cells = lines[r + 1].split(",");
    for (let f = 0; f < F; f++) {
      const c = Number(cells[f]);
      if (!Number.isInteger(c) || c < 0 || c >= K[f]) throw new Error(`row ${r + 1}, ${features[f]}: code ${cells[f]} outside [0, ${K[f]})`);
      codes[r * F + f] = c;
    }
  }
  const cardinalities: Record<string, number> = {};
  const empirical: Record<string, number[]> = {};
  features.forEach((name, f) => {
    cardinalities[name] = K[f];
    const p = new Array<number>(K[f]).fill(0);
    for (let r = 0; r < rows; r++) p[codes[r * F + f]] += 1;
    empirical[name] = p.map((x) => x / rows);
  });
  const marginals: Metadata["marginals"] = [];
  for (let f = 0; f < F; f++) {
    for (let g = f + 1; g < F; g++) {
      const p = new Array<number>(K[f] * K[g]).fill(0);
      for (let r = 0; r < rows; r++) p[codes[r * F + f] * K[g] + codes[r * F + g]] += 1;
      marginals.push({ features: [features[f], features[g]], probs: p.map((x) => x / rows) });
    }
  }
  return { features, cardinalities, empirical_probs: empirical, marginals };
}

