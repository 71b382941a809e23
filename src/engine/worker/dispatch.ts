/**
 * Worker thread of the engine (piscina task handler). Holds the actors of the models pinned to
 * this thread and a small LRU of idle `ready` generators; opens its own Store on the shared LMDB
 * directory. One handler call per task; training tasks stay pending until training ends, the
 * others run in between (the training loops yield between steps).
 *
 * Latency isolation (docs/operations.md "Latency isolation on a worker"): with the
 * native core (the default) a training model's steps and validation passes run off this thread
 * (trainer.ts), so a generate, stop or delete of another model runs while they compute instead of
 * after them. A generate of a model that is training here copies its latest weights through the
 * actor, which waits for that model's own step in flight (never another model's).
 */
import { parentPort, threadId, workerData } from "node:worker_threads";
import * as tf from "@tensorflow/tfjs-core";
import { move, transferableSymbol, valueSymbol } from "piscina";
import { LmdbStore, type Store } from "../../store";
import { guardLmdbRejections } from "../../store/lmdb/rejections";
import {
  buildTargets,
  calibrationMarginals,
  checkpointWeights,
  cloneTfjsGenerator,
  conditionCalibration,
  disposeGenerator,
  drawInputs,
  generatorSpec,
  gpuStatus,
  initBackend,
  initParams,
  layoutOf,
  LOGITS_NOT_FINITE,
  NativeGenerator,
  nativeCoreStatus,
  packedColumns,
  poolRules,
  releaseInputs,
  repairPool,
  REPAIR_SEED_TAG,
  Rng,
  sampleCalibrated,
  sampleRows,
  toTensors,
  type CalibrationMarginal,
  type Checkpoint,
  type ComputeKind,
  type FixedCell,
  type GeneratorModel,
  type GeneratorSpec,
  type LatentSource,
  type Layout,
  type NamedArrays,
  type PoolRule,
} from "../../model";
import { ModelActor, type ActorEnv } from "./actor";
import { sampleSeededSource } from "./seeded-draw";
import { asParamError } from "../generate-task";
import type { GenerateModel, GenerateReply, GenerateTask, InfoReply, Task, TrainReply, WorkerConfig, WorkerLog } from "../protocol";

const config = workerData as WorkerConfig;
/** This worker's compute path: `native` only when the core loads in this thread. */
const compute: ComputeKind = config.compute === "native" && nativeCoreStatus().available ? "native" : "tfjs";
const actors = new Map<string, ModelActor>();
/** Idle ready generators, least recently used first (Map keeps insertion order). */
const idle = new Map<string, GeneratorModel>();
let store: Store | undefined;
let opening: Promise<Store> | undefined;

// lmdb-js's orphaned rejection after a failed commit (full disk) must not end this thread: the
// failure itself reached the write's caller (src/store/lmdb/rejections.ts). Others still do.
guardLmdbRejections(() => log("debug", "store commit failed (lmdb-js's internal batch promise)"));

/**
 * Opens this thread's store once (before its first task runs): its own LMDB Store on the shared
 * directory, or its own PgStore (connection pool) on the shared database.
 */
function openStore(): Promise<Store> {
  opening ??= (async (): Promise<Store> => {
    const url = config.databaseUrl;
    const s: Store = url === undefined ? new LmdbStore(config.dataDir) : await (await import("../../store/postgres/pgStore")).PgStore.open(url, { heartbeat: false });
    store = s;
    return s;
  })();
  return opening;
}

/**
 * This thread's store, with a fresh read snapshot: lmdb-js keeps a read transaction per thread and
 * renews it only on a later event turn or after this thread's own writes, so a record the main
 * thread committed just before posting the task could otherwise be invisible here.
 */
function getStore(): Store {
  if (store === undefined) throw new Error("the worker's store is not open yet");
  store.refreshReads?.();
  return store;
}

function log(level: WorkerLog["synthdLog"]["level"], msg: string, fields?: Record<string, unknown>): void {
  const m: WorkerLog = { synthdLog: { level, msg, fields: { thread: threadId, ...fields } } };
  parentPort?.postMessage(m);
}

const yieldFn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function env(): ActorEnv {
  return { store: getStore(), yieldFn, log, compute };
}

/**
 * Native generators of the idle cache lent to requests in flight: a request shares the cache's
 * core (no copy), and a core the cache lets go of meanwhile is freed when its last request ends.
 */
const loans = new Map<NativeGenerator, { uses: number; dropped: boolean }>();

/** Frees a model the cache (or a request) owned, or defers that while requests still use it. */
function dropModel(m: GeneratorModel): void {
  const loan = m.native ? loans.get(m.native) : undefined;
  if (loan) loan.dropped = true;
  else disposeGenerator(m);
}

/** A generator for `weights` on this worker's compute path. */
function makeGenerator(spec: GeneratorSpec, layout: Layout, weights: NamedArrays): GeneratorModel {
  if (compute === "native") {
    try {
      return { spec, layout, params: {}, native: NativeGenerator.create(spec, layout, weights) };
    } catch (err) {
      log("warn", "native generator unavailable; using tfjs", { err: err instanceof Error ? err.message : String(err) });
    }
  }
  return { spec, layout, params: toTensors(spec, weights) };
}

function cacheIdle(id: string, model: GeneratorModel): void {
  const old = idle.get(id);
  if (old && old !== model) dropModel(old);
  idle.delete(id);
  idle.set(id, model);
  while (idle.size > Math.max(0, config.idleModels)) {
    const [oldest, m] = idle.entries().next().value as [string, GeneratorModel];
    idle.delete(oldest);
    dropModel(m);
  }
}

function evict(id: string): void {
  const m = idle.get(id);
  if (m) dropModel(m);
  idle.delete(id);
  drawInputsCache.delete(id);
}

async function train(id: string, fence?: number): Promise<TrainReply> {
  if (actors.has(id)) return { outcome: "skipped" };
  evict(id);
  const actor = new ModelActor(id, env(), fence);
  actors.set(id, actor); // before any await: a stop task queued right after finds it
  try {
    const reply = await actor.start();
    if (reply.outcome === "ready" && actor.result) cacheIdle(id, actor.result);
    return reply;
  } finally {
    if (actors.get(id) === actor) actors.delete(id);
  }
}

async function stop(id: string, kind: "stop" | "halt"): Promise<void> {
  const actor = actors.get(id);
  if (actor) {
    await actor.abort(kind);
    if (actors.get(id) === actor) actors.delete(id);
  }
  evict(id);
}

/**
 * What a draw of a model needs from its metadata: its fixed-combinations rules (every draw from
 * the model's own latents keeps them) and, for the calibrated draw, the marginals to rake to.
 */
interface DrawInputs {
  rules: PoolRule[];
  marginals: CalibrationMarginal[];
}

/**
 * Draw inputs of the models that drew rows here lately, by id, least recently used first; at most
 * {@link DRAW_INPUTS_KEPT}. A model's metadata never changes (it is given at creation; a deleted
 * model's id is not reused), so neither do they. Building them per request read and decoded the
 * metadata, built the targets, marginals and the rules' conditionals, and V8 compiled those
 * functions late, on its helper threads, since each ran once per request (~10-15 ms of the worker
 * and 50-80 ms of compiles in a server's first requests; docs/decisions.md "Little garbage and
 * setup per generate request").
 */
const drawInputsCache = new Map<string, DrawInputs>();

/** Models whose draw inputs a worker keeps. */
const DRAW_INPUTS_KEPT = 8;

/**
 * Model `id`'s draw inputs (pool features `features`, its layout's order), from the cache or built
 * from its metadata.
 * @throws Error when the model has no metadata.
 */
async function drawInputsOf(id: string, features: readonly string[]): Promise<DrawInputs> {
  let inputs = drawInputsCache.get(id);
  if (inputs === undefined) {
    const metadata = await getStore().getMetadata(id);
    if (metadata === undefined) throw new Error(`model ${id} has no metadata`);
    inputs = { rules: poolRules(metadata, features), marginals: calibrationMarginals(buildTargets(metadata)) };
  }
  drawInputsCache.delete(id);
  drawInputsCache.set(id, inputs);
  while (drawInputsCache.size > DRAW_INPUTS_KEPT) drawInputsCache.delete(drawInputsCache.keys().next().value as string);
  return inputs;
}

/** A generator lent to one request, and how to give it back. */
interface Lease {
  model: GeneratorModel;
  release(): void;
}

/** Lends a cached model (its weights never change): native cores are shared, tensors cloned. */
function lend(model: GeneratorModel): Lease {
  const core = model.native;
  if (!core) {
    const copy = cloneTfjsGenerator(model);
    return { model: copy, release: () => disposeGenerator(copy) };
  }
  const loan = loans.get(core) ?? { uses: 0, dropped: false };
  loans.set(core, loan);
  loan.uses += 1;
  return {
    model,
    release: () => {
      loan.uses -= 1;
      if (loan.uses > 0) return;
      loans.delete(core);
      if (loan.dropped) disposeGenerator(model);
    },
  };
}

/**
 * The weights to generate from: a copy of the live actor's (latest; it waits for that model's
 * own step in flight), the idle cache, or the stored checkpoint (read with the metadata, for the
 * layout; the generator's shape is `m`'s, as the caller read the record).
 * @throws Error when the metadata or a ready model's checkpoint is missing (e.g. the model was
 *   deleted while its actor's snapshot waited).
 */
async function acquire(id: string, m: GenerateModel): Promise<Lease> {
  const live = await actors.get(id)?.snapshot(m.status === "ready");
  if (live) return { model: live, release: () => disposeGenerator(live) };
  const cached = idle.get(id);
  if (cached) {
    cacheIdle(id, cached); // most recently used
    return lend(cached);
  }
  const s = getStore();
  const meta = await s.getMetadata(id);
  if (meta === undefined) throw new Error("model metadata missing");
  const layout = layoutOf(meta);
  const spec = generatorSpec(m.modelSize, m.embeddingDim, layout);
  const ckpt = await s.getCheckpoint<Checkpoint>(id);
  if (m.status === "ready") {
    if (ckpt === undefined) throw new Error("a ready model has no checkpoint");
    const model = makeGenerator(spec, layout, checkpointWeights(ckpt, spec, true));
    cacheIdle(id, model);
    return lend(model);
  }
  // Training, but not (yet) running here: the last checkpoint, or the initial weights.
  const weights = ckpt ? checkpointWeights(ckpt, spec, false) : initParams(spec, Rng.fromString(`${id}:init`));
  const model = makeGenerator(spec, layout, weights);
  return { model, release: () => disposeGenerator(model) };
}

/**
 * Runs a generate task. The model's record was read, and the request checked against it, by the
 * caller (`../generate-task.ts`): the task says which weights (`task.model.status`) and how to
 * draw, and nothing here reads the record again, except to tell a deleted model from a broken
 * one when its weights cannot be loaded.
 */
async function generate(task: GenerateTask): Promise<GenerateReply | object> {
  let lease: Lease;
  try {
    lease = await acquire(task.id, task.model);
  } catch (err) {
    // Deleted while the snapshot waited for the model's own step: as if it had been gone before.
    if ((await getStore().getModel(task.id)) === undefined) return { ok: false, kind: "not_found", message: `no model ${task.id}` };
    return { ok: false, kind: "internal", message: `cannot load the model's weights: ${err instanceof Error ? err.message : String(err)}` };
  }
  const model = lease.model;
  try {
    const source: LatentSource = task.latents ? { latents: task.latents } : { numRows: task.numRows ?? 0, seed: task.seed };
    const F = model.layout.features.length;
    const noise = task.model.privacyNoise;
    const sampling = { temperature: task.temperature, topP: task.topP, yieldFn };
    let cols: Int32Array[];
    if (task.seeded) {
      // Seeded generation: the model's own conditional, same options as the plain draw;
      // with calibrate, corrected by what the given marginals say of each condition.
      let calibration: ((fixed: readonly FixedCell[]) => ReturnType<typeof conditionCalibration>) | undefined;
      if (task.seeded.calibrate) {
        const metadata = await getStore().getMetadata(task.id);
        if (metadata === undefined) throw new Error(`model ${task.id} has no metadata`);
        const rows = Math.max(0, ...Object.values(metadata.column_stats ?? {}).map((c) => c.count + (c.missing ?? 0)));
        let marginals: CalibrationMarginal[] | undefined;
        calibration = (fixed) => conditionCalibration((marginals ??= calibrationMarginals(buildTargets(metadata))), fixed, rows);
      }
      cols = await sampleSeededSource(model, task.seeded, { ...sampling, seed: task.seed, privacyNoise: noise, calibration });
    } else if (task.calibrate && task.numRows !== undefined) {
      const { marginals, rules } = await drawInputsOf(task.id, model.layout.features);
      cols = (await sampleCalibrated(model, { numRows: task.numRows, seed: task.seed }, noise, marginals, sampling, rules)).columns;
    } else {
      const { rules } = await drawInputsOf(task.id, model.layout.features);
      const inputs = drawInputs(source, model.spec.embeddingDim, F, noise);
      try {
        cols = await sampleRows(model, inputs, sampling);
      } finally {
        releaseInputs(inputs);
      }
      // The plain draw keeps the fixed-combinations rules as the calibrated draw's pool does, with
      // the same repair and its own stream (the draw's seed xor REPAIR_SEED_TAG).
      if (rules.length > 0) repairPool(cols, rules, (inputs.seed ^ REPAIR_SEED_TAG) >>> 0);
    }
    const n = cols[0].length;
    const codes = packedColumns(cols); // the draws' own F x n array where they have one (no copy)
    const reply: GenerateReply = { ok: true, model_id: task.id, num_rows: n, features: model.layout.features, codes };
    // Transfer the codes instead of copying them.
    return move({ [transferableSymbol]: [codes.buffer], [valueSymbol]: reply } as unknown as Parameters<typeof move>[0]);
  } catch (err) {
    const bad = asParamError(err);
    if (bad) return { ok: false, kind: "param", param: bad.param, message: bad.message };
    if (task.latents !== undefined && isLogitOverflow(err)) {
      // Latents finite in float32 but so large that the forward pass overflows: the client's
      // input, not a fault of the model (drawn latents are standard normal and never do this).
      return {
        ok: false,
        kind: "param",
        param: "body.embedding",
        message: "The latent vectors are too large for this model: its outputs overflow. Latents are standard normal draws (as the SDK makes them).",
      };
    }
    // Deleted while it ran (its metadata read after the handler's check): as if it had been gone before.
    if ((await getStore().getModel(task.id)) === undefined) return { ok: false, kind: "not_found", message: `no model ${task.id}` };
    return { ok: false, kind: "internal", message: err instanceof Error ? err.message : String(err) };
  } finally {
    lease.release();
  }
}

/**
 * True for the sampling kernels' refusal of non-finite logits: both paths (`checkSampleArgs` in
 * model/sampling.ts and the native core) throw a RangeError with code {@link LOGITS_NOT_FINITE}.
 */
function isLogitOverflow(err: unknown): boolean {
  return err instanceof RangeError && (err as RangeError & { code?: unknown }).code === LOGITS_NOT_FINITE;
}

/** `{ gpu: name }` when the native core's CUDA library found a GPU, else `{}`. */
function gpuOf(): { gpu?: string } {
  const st = gpuStatus();
  return st.available && st.device !== undefined ? { gpu: st.device } : {};
}

async function info(): Promise<InfoReply> {
  const mem = tf.memory();
  const info = compute === "native" ? nativeCoreStatus().info : undefined;
  return {
    backend: await initBackend(),
    compute,
    computeInfo: info && { isa: info.isa, kernel: info.kernel, threads: info.threads },
    ...(compute === "native" ? gpuOf() : {}),
    threadId,
    actors: [...actors.keys()],
    cached: [...idle.keys()],
    numTensors: mem.numTensors,
    numBytes: mem.numBytes,
  };
}

/** The piscina handler: one call per task. */
export default async function handle(task: Task): Promise<unknown> {
  await initBackend();
  await openStore();
  switch (task.op) {
    case "train":
      return train(task.id, task.fence);
    case "generate":
      return generate(task);
    case "stop":
    case "halt":
      await stop(task.id, task.op);
      return {};
    case "info":
      return info();
  }
}
