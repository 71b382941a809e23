/**
 * `npm run bench -- latency [--json]`: latency of `GET /v1/models/{id}` while two models train,
 * against the same requests on an idle server measured in the same run (the baseline).
 *
 * Method: one `synthd serve` (2 workers) on a temporary store. Phase 1 (idle): one ready model,
 * `--requests` GETs from `--concurrency` keep-alive connections. Phase 2 (loaded): two models
 * training on UCI Adult (model_size medium), the same GETs. Reports p50/p99/max in milliseconds
 * and the loaded/idle ratios.
 *
 * Second case (issue 11, DESIGN §4 "training one model never stalls requests for another"): a
 * server with ONE worker, so every model shares it. A 10-row generate of a ready model A,
 * `--generate-requests` times one after another, on the idle server and then while two large
 * models (model_size large) train on that same worker; p50/p99/max and the loaded/idle ratios.
 * The loaded phase goes on past `--generate-requests` until each large model has completed
 * {@link LOADED_EPOCH_ENDS} more epochs, so it covers epoch ends (validation, checkpoint, store
 * write), and reports those epochs (training was not starved). Then the same for
 * `DELETE /v1/models/{id}` of idle ready models C_i on that worker (a stop task on the worker plus
 * the store's delete), {@link LatencyOptions.deleteRequests} per phase.
 * Note: with few requests the p99 is the maximum (40 requests: the 40th value); pass
 * `--generate-requests 200` or more for a p99 that is not one outlier.
 * The bound this measures and the figures: docs/operations.md "Latency isolation on a worker".
 */
import { Agent, request } from "node:http";
import { join } from "node:path";
import { Synthd, Synthesizer } from "../src/sdk";
import { ADULT_CSV, removeDir, startServer, tempDir, waitFor } from "./harness";

/** Options of the latency benchmark. */
export interface LatencyOptions {
  requests: number;
  concurrency: number;
  /** Sequential 10-row generates per phase of the one-worker case. */
  generateRequests: number;
  /** Sequential deletes of idle ready models per phase of the one-worker case (default 10). */
  deleteRequests?: number;
  /**
   * `--shared`: also measure a front end of the shared topology (issue 14: one front end and one
   * worker on PostgreSQL and Redis, bench/topology.ts) and print its ratios to the embedded server.
   */
  shared?: boolean;
  json: boolean;
}

/** What `--shared` measures on the shared topology, beside the embedded server's same figures. */
export interface SharedLatency {
  get_idle: LatencySummary;
  get_while_two_models_train: LatencySummary;
  generate10_idle: LatencySummary;
}

/**
 * The shared topology's figures (see {@link LatencyOptions.shared}): GET of a ready model idle and
 * while two medium models train on the worker, and sequential 10-row generates, all through the
 * front end.
 */
async function sharedCase(opts: LatencyOptions): Promise<SharedLatency> {
  const { Topology } = await import("./topology");
  const t = await Topology.start({ workers: 1, frontEnds: 1, threads: 2 });
  try {
    const key = await t.createKey("bench");
    const url = t.frontEnds[0].url;
    const client = new Synthd({ apiKey: key, baseUrl: url });
    const probe = await Synthesizer.fit(client, ADULT_CSV, { config: { model_size: "small", max_epochs: 1 } });
    const path = `/v1/models/${probe.id}`;
    const getIdle = await hammer(url, key, path, opts);
    await generates(client, probe.id, 3); // warm-up: the worker loads the weights
    const gen = await generates(client, probe.id, opts.generateRequests);
    const config = { model_size: "medium" as const, max_epochs: 50, early_stop_patience: 0 };
    const trainees = await Promise.all([0, 1].map(() => Synthesizer.fit(client, ADULT_CSV, { config, wait: false })));
    await waitFor("both models to be mid-training", async () => {
      const ms = await Promise.all(trainees.map((m) => client.models.retrieve(m.id)));
      return ms.every((m) => m.current_epoch >= 1) ? true : undefined;
    }, 300_000, 250);
    const loaded = await hammer(url, key, path, opts);
    await Promise.all(trainees.map((m) => client.models.delete(m.id)));
    return { get_idle: getIdle, get_while_two_models_train: loaded, generate10_idle: gen };
  } finally {
    await t.close();
  }
}

/** Percentile summary in milliseconds. */
export interface LatencySummary {
  requests: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

async function hammer(url: string, key: string, path: string, opts: LatencyOptions): Promise<LatencySummary> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const u = new URL(url);
  const times: number[] = [];
  let next = 0;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const req = request(
        { host: u.hostname, port: u.port, path, agent, headers: { authorization: `Bearer ${key}` } },
        (res) => {
          res.resume();
          res.on("end", () => {
            if (res.statusCode !== 200) return reject(new Error(`GET ${path}: ${res.statusCode}`));
            times.push(Number(process.hrtime.bigint() - t0) / 1e6);
            resolve();
          });
        },
      );
      req.on("error", reject);
      req.end();
    });
  const workers = Array.from({ length: opts.concurrency }, async () => {
    while (next++ < opts.requests) await one();
  });
  await Promise.all(workers);
  agent.destroy();
  return summarize(times);
}

function summarize(times: number[]): LatencySummary {
  times.sort((a, b) => a - b);
  return { requests: times.length, p50_ms: quantile(times, 0.5), p99_ms: quantile(times, 0.99), max_ms: times[times.length - 1] };
}

/** The loaded/idle ratios of the p50 and p99. */
function ratios(idle: LatencySummary, loaded: LatencySummary): { p50_ratio: number; p99_ratio: number } {
  return { p50_ratio: loaded.p50_ms / idle.p50_ms, p99_ratio: loaded.p99_ms / idle.p99_ms };
}

/** Milliseconds until `request()` settles (rejections propagate). */
async function timed(request: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await request();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** The `i`-th 10-row generate of model `id` (plain draw, seed `i`). */
const generate10 = (client: Synthd, id: string, i: number): Promise<unknown> => client.models.generate(id, { embedding: { num_rows: 10, seed: i } });

/**
 * Epoch ends each large model completes while the loaded phase of the one-worker case runs, at
 * least: the phase goes on past `--generate-requests` until they have, so that it covers what
 * happens at an epoch's end (validation, checkpoint, store write), not only steps.
 */
export const LOADED_EPOCH_ENDS = 2;

/** `n` sequential 10-row generates of model `id` (plain draw), in milliseconds each. */
async function generates(client: Synthd, id: string, n: number): Promise<LatencySummary> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push(await timed(() => generate10(client, id, i)));
  return summarize(times);
}

/**
 * Sequential 10-row generates of model `id` while `trainees` train: at least `n`, and on until
 * each trainee has completed {@link LOADED_EPOCH_ENDS} more epochs (at most 50 n requests).
 * Resolves with the latencies and the epochs each trainee completed meanwhile.
 */
async function generatesAcrossEpochs(client: Synthd, id: string, n: number, trainees: string[]): Promise<{ summary: LatencySummary; epochs: number[] }> {
  const epochsNow = async (): Promise<number[]> => (await Promise.all(trainees.map((t) => client.models.retrieve(t)))).map((m) => m.current_epoch);
  const start = await epochsNow();
  const times: number[] = [];
  let epochs = start.map(() => 0);
  for (let i = 0; i < 50 * n; i++) {
    times.push(await timed(() => generate10(client, id, i)));
    if (times.length >= n && times.length % 25 === 0) {
      epochs = (await epochsNow()).map((e, k) => e - start[k]);
      if (epochs.every((e) => e >= LOADED_EPOCH_ENDS)) break;
    }
  }
  return { summary: summarize(times), epochs };
}

/** Deletes `ids` one after another, in milliseconds each. */
async function deletes(client: Synthd, ids: string[]): Promise<LatencySummary> {
  const times: number[] = [];
  for (const id of ids) times.push(await timed(() => client.models.delete(id)));
  return summarize(times);
}

/** What the one-worker case measures. */
export interface SameWorkerResult {
  idle: LatencySummary;
  loaded: LatencySummary;
  deleteIdle: LatencySummary;
  deleteLoaded: LatencySummary;
  training_during: boolean;
  /** Epochs each large model completed while the loaded phase ran. */
  trainee_epochs_during: number[];
}

/**
 * The one-worker case: generate latency of model A and delete latency of idle ready models C_i,
 * idle and while two large models train on the same worker thread.
 */
export async function sameWorkerCase(opts: LatencyOptions): Promise<SameWorkerResult> {
  const dir = tempDir("synthd-bench-");
  const server = await startServer(join(dir, "store"), ["--workers", "1"]);
  try {
    const client = new Synthd({ apiKey: server.sandboxKey!, baseUrl: server.url });
    const small = { model_size: "small" as const, max_epochs: 1 };
    const a = await Synthesizer.fit(client, ADULT_CSV, { config: small });
    // The models to delete: ready, idle, pinned to the one worker (same metadata as A).
    const nDel = opts.deleteRequests ?? 10;
    const victims: string[] = [];
    for (let i = 0; i < 2 * nDel; i++) victims.push((await client.models.create({ metadata: a.metadata, config: small })).id);
    for (const id of victims) await client.models.waitUntilReady(id);
    await generates(client, a.id, 3); // warm-up
    const idle = await generates(client, a.id, opts.generateRequests);
    const deleteIdle = await deletes(client, victims.slice(0, nDel));
    const config = { model_size: "large" as const, max_epochs: 50, early_stop_patience: 0 };
    const trainees = await Promise.all([0, 1].map(() => Synthesizer.fit(client, ADULT_CSV, { config, wait: false })));
    await waitFor("both large models to be training", async () => {
      const ms = await Promise.all(trainees.map((t) => client.models.retrieve(t.id)));
      return ms.every((m) => m.status === "training") ? true : undefined;
    }, 300_000, 250);
    await new Promise((r) => setTimeout(r, 2000)); // past the first steps' set-up
    const loaded = await generatesAcrossEpochs(client, a.id, opts.generateRequests, trainees.map((t) => t.id));
    const deleteLoaded = await deletes(client, victims.slice(nDel));
    const still = await Promise.all(trainees.map((t) => client.models.retrieve(t.id)));
    await Promise.all(trainees.map((t) => client.models.delete(t.id)));
    return {
      idle,
      loaded: loaded.summary,
      deleteIdle,
      deleteLoaded,
      training_during: still.every((m) => m.status === "training"),
      trainee_epochs_during: loaded.epochs,
    };
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
}

/** Runs the benchmark and prints its result (a JSON line with `--json`). */
export async function latencyBench(opts: LatencyOptions): Promise<void> {
  const dir = tempDir("synthd-bench-");
  const server = await startServer(join(dir, "store"), ["--workers", "2"]);
  try {
    const key = server.sandboxKey!;
    const client = new Synthd({ apiKey: key, baseUrl: server.url });
    const probe = await Synthesizer.fit(client, ADULT_CSV, { config: { model_size: "small", max_epochs: 1 } });
    const path = `/v1/models/${probe.id}`;
    const idle = await hammer(server.url, key, path, opts);
    await generates(client, probe.id, 3); // warm-up
    const gen10 = await generates(client, probe.id, opts.generateRequests);

    const config = { model_size: "medium" as const, max_epochs: 50, early_stop_patience: 0 };
    const trainees = await Promise.all([0, 1].map(() => Synthesizer.fit(client, ADULT_CSV, { config, wait: false })));
    await waitFor("both models to be mid-training", async () => {
      const ms = await Promise.all(trainees.map((t) => client.models.retrieve(t.id)));
      return ms.every((m) => m.current_epoch >= 1) ? true : undefined;
    }, 300_000, 250);
    const loaded = await hammer(server.url, key, path, opts);
    const still = await Promise.all(trainees.map((t) => client.models.retrieve(t.id)));
    await Promise.all(trainees.map((t) => client.models.delete(t.id)));

    const gen = await sameWorkerCase(opts);
    const shared = opts.shared ? await sharedCase(opts) : undefined;
    const over = (a: LatencySummary, b: LatencySummary): { p50_ratio: number; p99_ratio: number } => ({
      p50_ratio: Number((a.p50_ms / b.p50_ms).toFixed(2)),
      p99_ratio: Number((a.p99_ms / b.p99_ms).toFixed(2)),
    });
    const result = {
      bench: "latency",
      generate10_idle: gen10,
      ...(shared && {
        shared_topology: {
          setup: "1 front end + 1 worker (2 engine threads), PostgreSQL + Redis, same machine",
          ...shared,
          get_idle_over_embedded: over(shared.get_idle, idle),
          get_loaded_over_embedded: over(shared.get_while_two_models_train, loaded),
          generate10_over_embedded: over(shared.generate10_idle, gen10),
        },
      }),
      generate_same_worker: {
        endpoint: "POST /v1/models/{id}/generate, 10 rows, one worker",
        idle: gen.idle,
        while_two_large_models_train: gen.loaded,
        both_still_training_at_end: gen.training_during,
        trainee_epochs_during: gen.trainee_epochs_during,
        ...ratios(gen.idle, gen.loaded),
        delete_idle_model: {
          endpoint: "DELETE /v1/models/{id} of an idle ready model on the same worker",
          idle: gen.deleteIdle,
          while_two_large_models_train: gen.deleteLoaded,
          ...ratios(gen.deleteIdle, gen.deleteLoaded),
        },
      },
      endpoint: "GET /v1/models/{id}",
      concurrency: opts.concurrency,
      idle,
      while_two_models_train: loaded,
      both_still_training_at_end: still.every((m) => m.status === "training"),
      ...ratios(idle, loaded),
    };
    if (opts.json) console.log(JSON.stringify(result));
    else {
      const fmt = (s: LatencySummary): string => `p50 ${s.p50_ms.toFixed(2)} ms  p99 ${s.p99_ms.toFixed(2)} ms  max ${s.max_ms.toFixed(2)} ms`;
      console.log(`GET /v1/models/{id}, ${opts.requests} requests, concurrency ${opts.concurrency}`);
      console.log(`  idle server:            ${fmt(idle)}`);
      console.log(`  two models training:    ${fmt(loaded)}`);
      console.log(`  ratio loaded/idle:      p50 ${result.p50_ratio.toFixed(2)}x  p99 ${result.p99_ratio.toFixed(2)}x`);
      console.log(`  both still training at the end: ${result.both_still_training_at_end}`);
      const g = result.generate_same_worker;
      console.log(`10-row generate of model A, sequential requests (idle ${g.idle.requests}, loaded ${g.while_two_large_models_train.requests}), one worker shared with two large trainings`);
      console.log(`  idle server:            ${fmt(g.idle)}`);
      console.log(`  two large models train: ${fmt(g.while_two_large_models_train)}`);
      console.log(`  ratio loaded/idle:      p50 ${g.p50_ratio.toFixed(2)}x  p99 ${g.p99_ratio.toFixed(2)}x`);
      console.log(`  both still training at the end: ${g.both_still_training_at_end} (epochs during: ${g.trainee_epochs_during.join(", ")})`);
      const sh = result.shared_topology;
      if (sh) {
        console.log(`shared topology (${sh.setup}), ratios to the embedded server measured above`);
        console.log(`  GET idle:               ${fmt(sh.get_idle)}  (p50 ${sh.get_idle_over_embedded.p50_ratio}x, p99 ${sh.get_idle_over_embedded.p99_ratio}x)`);
        console.log(`  GET, two models train:  ${fmt(sh.get_while_two_models_train)}  (p50 ${sh.get_loaded_over_embedded.p50_ratio}x, p99 ${sh.get_loaded_over_embedded.p99_ratio}x)`);
        console.log(`  10-row generate idle:   ${fmt(sh.generate10_idle)}  (p50 ${sh.generate10_over_embedded.p50_ratio}x, p99 ${sh.generate10_over_embedded.p99_ratio}x; embedded ${fmt(gen10)})`);
      }
      const d = g.delete_idle_model;
      console.log(`DELETE of an idle ready model on that worker, ${d.idle.requests} sequential requests per phase`);
      console.log(`  idle server:            ${fmt(d.idle)}`);
      console.log(`  two large models train: ${fmt(d.while_two_large_models_train)}`);
      console.log(`  ratio loaded/idle:      p50 ${d.p50_ratio.toFixed(2)}x  p99 ${d.p99_ratio.toFixed(2)}x`);
    }
  } finally {
    await server.kill("SIGTERM");
    removeDir(dir);
  }
}
