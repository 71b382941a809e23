/**
 * `npm run bench -- memory`: calibration of the training-memory estimate (src/engine/admission/estimate.ts).
 *
 * For each config, a fresh `synthd serve` trains one model (time limit a few seconds, so one
 * epoch: the first steps, validation and the checkpoint all happen); the server's peak RSS during
 * training (VmHWM, reset with /proc/PID/clear_refs just before the create) minus its RSS before
 * the create is the measured growth, printed next to `estimateTrainingMemory` (`--json`: with
 * its parts), and the RSS the server still holds once the model is `ready`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { estimateTrainingMemory } from "../src/engine/admission/estimate";
import { formatBytes } from "../src/engine/admission/budget";
import { Synthd, Synthesizer } from "../src/sdk";
import { effectiveConfig } from "../src/server/handlers/createModel";
import type { Metadata, ModelConfigInput } from "../src/contract";
import { ADULT_CSV, removeDir, startServer, tempDir, waitFor, type ServerProcess } from "./harness";

/** Options of the `memory` benchmark. */
export interface MemoryBenchOptions {
  /** Comma-separated case names (default: all). */
  cases?: string;
  workers: number;
  compute?: "native" | "tfjs";
  /** `--memory-budget` of the servers (default 90%: the wide cases need more than the default half). */
  memoryBudget: string;
  json: boolean;
}

/**
 * `VmRSS` / `VmHWM` of a process (Linux `/proc/PID/status`), bytes; NaN for a line the file lacks
 * (a zombie has neither). @throws Error when the process does not exist (no status file).
 */
export function procMemory(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? NaN) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

/** A description of F features with K codes each (uniform 1-way marginals) and `pairs` 2-way marginals (f, f + 1), ... */
export function syntheticMetadata(F: number, K: number, pairs = 0): Metadata {
  const features = Array.from({ length: F }, (_, i) => `f${i}`);
  const cardinalities: Record<string, number> = {};
  const empirical_probs: Record<string, number[]> = {};
  for (const f of features) {
    cardinalities[f] = K;
    empirical_probs[f] = Array(K).fill(1 / K);
  }
  const marginals: Metadata["marginals"] = [];
  for (let p = 0, d = 1; marginals.length < pairs && d < F; d++) {
    for (let f = 0; f + d < F && marginals.length < pairs; f++, p++) {
      marginals.push({ features: [features[f], features[f + d]], probs: Array(K * K).fill(1 / (K * K)) });
    }
  }
  return { features, cardinalities, empirical_probs, ...(pairs > 0 ? { marginals } : {}) };
}

interface Case {
  name: string;
  config: ModelConfigInput;
  /** A synthetic description, or Adult through the SDK. */
  metadata: Metadata | "adult";
  /**
   * Measure a resume instead: SIGKILL once an epoch is checkpointed, restart on the store, and
   * measure the restarted server's peak RSS (from its start) minus the first server's idle RSS.
   */
  resume?: boolean;
}

const quick = { max_training_time: 3, early_stop_patience: 0 };
const CASES: Case[] = [
  { name: "small", config: { model_size: "small", ...quick }, metadata: "adult" },
  { name: "medium", config: { model_size: "medium", ...quick }, metadata: "adult" },
  { name: "large", config: { model_size: "large", ...quick }, metadata: "adult" },
  { name: "large-b8192", config: { model_size: "large", batch_size: 8192, embedding_dim: 512, ...quick }, metadata: "adult" },
  { name: "heavy", config: { model_size: "large", embedding_dim: 4096, batch_size: 65536, max_training_time: 1 }, metadata: syntheticMetadata(5, 4) },
  {
    name: "heavy-privacy",
    config: { model_size: "large", embedding_dim: 4096, batch_size: 65536, max_training_time: 1, privacy_enabled: true },
    metadata: syntheticMetadata(5, 4),
  },
  { name: "wide", config: { model_size: "medium", max_training_time: 1 }, metadata: syntheticMetadata(200, 1000) },
  { name: "wide-small", config: { model_size: "small", max_training_time: 1 }, metadata: syntheticMetadata(200, 1000) },
  { name: "pairs-dense", config: { model_size: "medium", batch_size: 1024, ...quick }, metadata: syntheticMetadata(40, 40, 150) },
  { name: "pairs-blocks", config: { model_size: "medium", batch_size: 1024, ...quick }, metadata: syntheticMetadata(60, 100, 60) },
  { name: "quarter-steps", config: { model_size: "large", embedding_dim: 4096, batch_size: 16384, max_training_time: 25 }, metadata: syntheticMetadata(5, 4) },
  {
    name: "wide-small-resume",
    config: { model_size: "small", max_epochs: 1000, max_training_time: 20, early_stop_patience: 0 },
    metadata: syntheticMetadata(200, 1000),
    resume: true,
  },
  {
    name: "large-resume",
    config: { model_size: "large", max_epochs: 1000, max_training_time: 6, early_stop_patience: 0 },
    metadata: "adult",
    resume: true,
  },
  { name: "quarter-1step", config: { model_size: "large", embedding_dim: 4096, batch_size: 16384, max_training_time: 1 }, metadata: syntheticMetadata(5, 4) },
];

async function createModel(server: ServerProcess, c: Case): Promise<{ id: string; metadata: Metadata }> {
  const client = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url });
  if (c.metadata === "adult") {
    let metadata: Metadata | undefined;
    const synth = await Synthesizer.fit(client, ADULT_CSV, { config: c.config, wait: false, onAnalysis: (a) => (metadata = a.metadata) });
    return { id: synth.id, metadata: metadata! };
  }
  const model = await client.models.create({ metadata: c.metadata, config: c.config });
  return { id: model.id, metadata: c.metadata };
}

/** Runs the cases; prints a table (or JSON lines) of estimate vs measured growth. */
export async function memoryBench(opts: MemoryBenchOptions): Promise<void> {
  const wanted = opts.cases ? new Set(opts.cases.split(",")) : undefined;
  const threads = availableParallelism() + opts.workers;
  const rows: string[][] = [["case", "estimate", "measured", "ratio", "retained after", "wall s"]];
  for (const c of CASES.filter((x) => wanted === undefined || wanted.has(x.name))) {
    const dir = tempDir("synthd-mem-");
    const extra = ["--workers", String(opts.workers), "--memory-budget", opts.memoryBudget, ...(opts.compute ? ["--compute", opts.compute] : [])];
    let server = await startServer(join(dir, "store"), extra);
    try {
      await runCase();
    } catch (err) {
      console.error(`${c.name}: ${(err as Error).message}`);
    } finally {
      await server.kill("SIGKILL");
      removeDir(dir);
    }
    async function runCase(): Promise<void> {
      let pid = server.child.pid!;
      await new Promise((r) => setTimeout(r, 1500));
      const before = procMemory(pid).rss;
      writeFileSync(`/proc/${pid}/clear_refs`, "5"); // VmHWM := VmRSS
      const t0 = performance.now();
      const { id, metadata } = await createModel(server, c);
      let client = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url });
      if (c.resume) {
        await waitFor(`${c.name} to checkpoint an epoch`, async () => {
          const m = await client.models.retrieve(id);
          if (m.status !== "training") throw new Error(`${c.name} ended ${m.status} before the kill`);
          return m.current_epoch >= 1 ? m : undefined;
        }, 900_000, 100);
        const key = server.sandboxKey!;
        await server.kill("SIGKILL");
        server = await startServer(join(dir, "store"), extra);
        pid = server.child.pid!;
        client = new Synthd({ apiKey: key, baseUrl: server.url });
      }
      const done = await waitFor(`${c.name} to finish`, async () => {
        const m = await client.models.retrieve(id);
        return m.status === "training" ? undefined : m;
      }, 900_000, 200);
      const wall = (performance.now() - t0) / 1000;
      if (done.status !== "ready") throw new Error(`${c.name} ended ${done.status}: ${JSON.stringify(done.error)}`);
      await new Promise((r) => setTimeout(r, 1000));
      const after = procMemory(pid);
      if (process.env.MEM_TRACE) {
        for (const l of server.stderr().split("\n")) if (/compute|finished|epoch|ready/.test(l)) console.error(l.slice(0, 400));
        let elapsedS = 1; // the wait above
        for (const s of [5, 15, 30]) {
          await new Promise((r) => setTimeout(r, (s - elapsedS) * 1000));
          elapsedS = s;
          console.error(`${c.name}: retained ${s} s after ready: ${formatBytes(procMemory(pid).rss - before)}`);
        }
      }
      const measured = after.hwm - before;
      // The config the server stored (defaults filled, aliases normalised); the device is not estimated.
      const config = effectiveConfig(c.config, "cpu");
      const est = estimateTrainingMemory(config, metadata, { compute: opts.compute ?? "native", threads });
      const line = {
        case: c.name,
        estimate: est.bytes,
        measured,
        ratio: est.bytes / measured,
        retained: after.rss - before,
        before,
        wall_s: wall,
        parts: est.parts,
        params: est.params,
        width: est.width,
        pair_cells: est.pairCells,
      };
      if (opts.json) console.log(JSON.stringify(line));
      rows.push([c.name, formatBytes(est.bytes), formatBytes(measured), line.ratio.toFixed(2), formatBytes(line.retained), wall.toFixed(1)]);
    }
  }
  if (!opts.json) {
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    for (const r of rows) console.log(r.map((x, i) => x.padEnd(widths[i])).join("  "));
  }
}
