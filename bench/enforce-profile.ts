/**
 * `node dist/bench/enforce-profile.js prepare DIR [--rows N] [--seeds 1,2,3]` then
 * `node dist/bench/enforce-profile.js decode DIR [--seeds 1,2,3] [--hash] [--rules-only]`:
 * the client's decode + row-rule repair of raw UCI Adult's plain draw, alone, so it can be run
 * under `node --cpu-prof` and compared between two versions of the SDK (issue 25).
 *
 * `prepare` starts `synthd serve` on DIR/store, fits raw Adult (`data/adult.csv`, the medium
 * model, 5 epochs, as `./sample`), and saves the metadata (DIR/metadata.json), the server's
 * address, key and model id (DIR/info.json; a later `synthd serve --data-dir DIR/store` serves
 * the same model) and, per seed, the codes of `--rows` rows (default 1,000,000) of plain draw in
 * batches of 100,000 as the SDK asks for them (`embedding.seed = deriveSeed(seed, b, 0)`), one
 * file per batch (DIR/codes-SEED-B.bin: per feature in `metadata.features` order, the batch's
 * Int32 codes, little endian).
 * `decode` decodes every saved batch with `Decoder.decodeBatch` (rules on; batch seed
 * `deriveSeed(seed, b, 1)`, as `Synthesizer.sampleBatches`) and prints this process's CPU
 * (user + system, `process.cpuUsage`) per 1M rows for decoding without rules and for the rules
 * alone (`Decoder.enforceCells` on a decoded batch); with `--hash`, the SHA-256 of every cell of
 * every batch (each cell's text and a separator), per seed, so two versions' outputs compare.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Synthd, Synthesizer } from "../src/sdk";
import { Decoder } from "../src/sdk/generate/decode";
import { deriveSeed } from "../src/sdk/generate/sfc32";
import type { Metadata } from "../src/contract";
import { readSavedCodes } from "./saved-codes";
import { ADULT_CSV, runCli, startServer } from "./harness";

const BLOCK = 100_000;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

async function prepare(dir: string): Promise<void> {
  const rows = Number(arg("--rows", "1000000"));
  const seeds = arg("--seeds", "1,2,3").split(",").map(Number);
  mkdirSync(dir, { recursive: true });
  const store = join(dir, "store");
  const server = await startServer(store, []);
  try {
    const keyRun = await runCli(["keys", "create", "--data-dir", store, "--org", "benchenforce", "--env", "live"]);
    if (keyRun.code !== 0) throw new Error(`keys create failed: ${keyRun.stderr}`);
    const key = keyRun.stdout.trim().split("\n").pop()!;
    const quota = await runCli(["orgs", "set", "--data-dir", store, "--org", "benchenforce", "--live-quota", String(1_000_000_000)]);
    if (quota.code !== 0) throw new Error(`orgs set failed: ${quota.stderr}`);
    const client = new Synthd({ apiKey: key, baseUrl: server.url });
    const synth = await Synthesizer.fit(client, ADULT_CSV, { config: { model_size: "medium", max_epochs: 5, early_stop_patience: 0 } });
    writeFileSync(join(dir, "metadata.json"), JSON.stringify(synth.metadata));
    writeFileSync(join(dir, "info.json"), JSON.stringify({ key, model: synth.id, rows }));
    for (const seed of seeds) {
      for (let b = 0; b * BLOCK < rows; b++) {
        const n = Math.min(BLOCK, rows - b * BLOCK);
        const gen = await client.models.generateCodes(synth.id, { embedding: { num_rows: n, seed: deriveSeed(seed, b, 0) } });
        const buf = Buffer.alloc(4 * n * synth.metadata.features.length);
        synth.metadata.features.forEach((f, i) => {
          const col = gen.columns[f];
          for (let r = 0; r < n; r++) buf.writeInt32LE(col[r], 4 * (i * n + r));
        });
        writeFileSync(join(dir, `codes-${seed}-${b}.bin`), buf);
      }
      process.stderr.write(`seed ${seed}: ${rows} rows saved\n`);
    }
  } finally {
    await server.kill("SIGTERM");
  }
}

function decode(dir: string): void {
  const metadata = JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8")) as Metadata;
  const seeds = arg("--seeds", "1,2,3").split(",").map(Number);
  const hash = process.argv.includes("--hash");
  const rulesOnly = process.argv.includes("--rules-only");
  const decoder = new Decoder(metadata);
  const files = readdirSync(dir);
  const cpu = (): number => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1e6;
  };
  let decodeS = 0;
  let rulesS = 0;
  let rows = 0;
  let changed = 0;
  let unrepaired = 0;
  for (const seed of seeds) {
    const h = createHash("sha256");
    for (let b = 0; files.includes(`codes-${seed}-${b}.bin`); b++) {
      const columns = readSavedCodes(dir, seed, b, metadata.features);
      const n = columns[metadata.features[0]].length;
      const batchSeed = deriveSeed(seed, b, 1);
      const opts = { rowOffset: b * BLOCK, idKey: deriveSeed(seed, 0, 2) };
      let t = cpu();
      const batch = decoder.decodeBatch(columns, batchSeed, { ...opts, rules: rulesOnly ? false : undefined });
      decodeS += cpu() - t;
      if (rulesOnly) {
        t = cpu();
        const res = decoder.enforceCells(batch, batchSeed, () => false, metadata.features.map((f) => columns[f]));
        rulesS += cpu() - t;
        changed += res.changed;
        unrepaired += res.unrepaired;
      }
      rows += n;
      if (hash) {
        for (let r = 0; r < n; r++) {
          let line = "";
          for (let f = 0; f < metadata.features.length; f++) line += `${batch.get(r, f)}\u0001`;
          h.update(`${line}\n`);
        }
      }
    }
    if (hash) console.log(`seed ${seed}: ${h.digest("hex")}`);
  }
  const perM = (s: number): string => ((s * 1e6) / rows).toFixed(3);
  console.log(
    `${rows} rows: decode${rulesOnly ? " (no rules)" : " + rules"} ${perM(decodeS)} core-s per 1M rows` +
      (rulesOnly ? `, rules ${perM(rulesS)} core-s per 1M rows (changed ${changed}, unrepaired ${unrepaired})` : ""),
  );
}

const [mode, dir] = process.argv.slice(2);
if (mode === "prepare") void prepare(dir);
else if (mode === "decode") decode(dir);
else {
  process.stderr.write("usage: enforce-profile prepare|decode DIR [...]\n");
  process.exit(2);
}
