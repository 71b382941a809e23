/**
 * `node --expose-gc dist/bench/parquet-write.js DIR [--seed 1] [--repeats 5] [--old DIST] [--only new|old] [--out PREFIX]`:
 * the client's CPU for writing Parquet from decoded batches, alone (issue 25). DIR is made by
 * `node dist/bench/enforce-profile.js prepare DIR --seeds 1` (real codes of raw Adult's plain
 * draw, batches of 100,000 rows).
 *
 * The saved batches of `--seed` are decoded once (`Decoder.decodeBatch`, rules on, as
 * `enforce-profile decode` does) and kept; then, `--repeats` times, each writer writes them all
 * with `writeBatches(sink, batches, { format: "parquet", rowGroupRows: 100000 })` into a sink that
 * only counts the bytes, and this process's CPU (user + system, `process.cpuUsage`, all threads)
 * over the write, a full garbage collection after it (with `--expose-gc`; one is also run,
 * uncounted, before) and half a second of idling (the write's background threads finishing) is
 * printed per 1M rows, with the growth of the peak resident memory during the write over the
 * resident memory before it (Linux: `/proc/self/clear_refs` resets the peak). Writers: this build's (`new`) and, with `--old
 * DIST`, the `dist` folder of another build (its `src/sdk/io/formats.js`, or `src/sdk/formats.js` before issue 26, e.g. the commit before
 * issue 25's Parquet writer, whose Parquet is parquet-wasm), alternating which goes first. With
 * `--out PREFIX`, each writer's file is also written to PREFIX-new.parquet / PREFIX-old.parquet.
 * `--only NAME` runs one of the two: in one process, a writer run right after the other one was
 * measured up to twice as slow as after itself (parquet-wasm's memory and garbage linger), so
 * the fair comparison is processes of one writer each, alternated:
 * `for i in 1 2 3; do for w in new old; do node --expose-gc dist/bench/parquet-write.js DIR
 * --old OLD --only $w --repeats 3; done; done` (the first write of a process includes compiling
 * the writer, as a CLI run's does).
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { DecodedBatch } from "../src/sdk/generate/batch";
import { Decoder } from "../src/sdk/generate/decode";
import { writeBatches } from "../src/sdk/io/formats";
import { deriveSeed } from "../src/sdk/generate/sfc32";
import type { Metadata } from "../src/contract";
import { readSavedCodes } from "./saved-codes";

const BLOCK = 100_000;
/** Idle time at the end of each measured window, so that one writer's background work is not billed to the next. */
const SETTLE_MS = 500;

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

type Write = typeof writeBatches;

/** This process's resident and peak resident memory, bytes (Linux `/proc/self/status`; NaN elsewhere). */
function memory(): { rss: number; hwm: number } {
  try {
    const s = readFileSync("/proc/self/status", "utf8");
    const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? NaN) * 1024;
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
  } catch {
    return { rss: NaN, hwm: NaN };
  }
}

/** Resets the peak resident memory to the current (Linux `clear_refs`); false where that is not possible. */
function resetPeak(): boolean {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
}

/** A sink that counts the bytes written to it and keeps none. */
function countingSink(): { sink: Writable; bytes: () => number } {
  let n = 0;
  const sink = new Writable({
    write(chunk: Uint8Array, _enc, cb) {
      n += chunk.length;
      cb();
    },
  });
  return { sink, bytes: () => n };
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  const seed = Number(arg("--seed", "1"));
  const repeats = Number(arg("--repeats", "5"));
  const oldDist = process.argv.includes("--old") ? arg("--old", "") : undefined;
  const out = process.argv.includes("--out") ? arg("--out", "") : undefined;
  const metadata = JSON.parse(readFileSync(join(dir, "metadata.json"), "utf8")) as Metadata;
  const decoder = new Decoder(metadata);
  const files = readdirSync(dir);
  const batches: DecodedBatch[] = [];
  for (let b = 0; files.includes(`codes-${seed}-${b}.bin`); b++) {
    const columns = readSavedCodes(dir, seed, b, metadata.features);
    batches.push(decoder.decodeBatch(columns, deriveSeed(seed, b, 1), { rowOffset: b * BLOCK, idKey: deriveSeed(seed, 0, 2) }));
  }
  const rows = batches.reduce((n, b) => n + b.length, 0);
  const only = process.argv.includes("--only") ? arg("--only", "") : undefined;
  let writers: [string, Write][] = [["new", writeBatches]];
  if (oldDist) writers.push(["old", (require([join(oldDist, "src/sdk/io/formats.js"), join(oldDist, "src/sdk/formats.js")].find((p) => existsSync(p)) ?? join(oldDist, "src/sdk/io/formats.js")) as { writeBatches: Write }).writeBatches]);
  if (only) writers = writers.filter(([name]) => name === only);
  const gc = (globalThis as { gc?: () => void }).gc;
  const cpu = (): number => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1e6;
  };
  async function* each(): AsyncGenerator<DecodedBatch> {
    yield* batches;
  }
  const times = new Map<string, number[]>(writers.map(([name]) => [name, []]));
  const peaks = new Map<string, number[]>(writers.map(([name]) => [name, []]));
  const sizes = new Map<string, number>();
  for (let rep = 0; rep < repeats; rep++) {
    const order = rep % 2 === 0 ? writers : [...writers].reverse();
    for (const [name, write] of order) {
      gc?.();
      const { sink, bytes } = countingSink();
      const before = memory().rss;
      const peak = resetPeak();
      const t = cpu();
      await write(sink, each(), { format: "parquet", metadata, rowGroupRows: BLOCK });
      gc?.();
      // The write's work on other threads (concurrent marking and compiling) ends within the window.
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      times.get(name)!.push(((cpu() - t) * 1e6) / rows);
      if (peak) peaks.get(name)!.push(memory().hwm - before);
      sizes.set(name, bytes());
    }
  }
  for (const [name] of writers) {
    const ts = times.get(name)!;
    const sorted = [...ts].sort((a, b) => a - b);
    const mb = peaks.get(name)!.map((x) => (x / 2 ** 20).toFixed(0));
    console.log(
      `${name}: ${rows} rows, ${sizes.get(name)} bytes; core-s per 1M rows: ${ts.map((x) => x.toFixed(3)).join(" ")} (median ${sorted[Math.floor(sorted.length / 2)].toFixed(3)})` +
        (mb.length ? `; peak RSS over the start of the write, MiB: ${mb.join(" ")}` : ""),
    );
    if (out) await writers.find(([n]) => n === name)![1](`${out}-${name}.parquet`, each(), { format: "parquet", metadata, rowGroupRows: BLOCK });
  }
  if (!gc) console.log("(run with node --expose-gc to count a full collection after each write)");
}

void main();
