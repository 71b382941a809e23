/**
 * Worker thread of the engine (piscina task handler): the actors of the models pinned here, an LRU
 * of idle `ready` generators, its own Store. Training tasks stay pending until training ends;
 * others run between steps. With the native core a model's steps run off this thread, so another
 * model's generate, stop or delete need not wait for them (docs/operations.md "Latency isolation
 * on a worker"); a generate of a model training here waits only for its own step in flight.
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

// lmdb-js's orphaned rejection after a failed commit (full disk) must not end this thread; the
// write's caller got the failure (src/store/lmdb/rejections.ts).
guardLmdbRejections(() => log("debug", "store commit failed (lmdb-js's internal batch promise)"));

/** Opens this thread's own store once, before its first task: LMDB or a PgStore pool. */
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
 * This thread's store with a fresh read snapshot: lmdb-js renews a thread's read transaction only
 * on a later turn or its own writes, so the main thread's commit before posting could be unseen.
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
 * Native generators of the idle cache lent to requests: shared (no copy); a core the cache drops
 * meanwhile is freed when its last request ends.
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

/** A draw's inputs from metadata: fixed-combinations rules, the calibrated draw's marginals. */
interface DrawInputs {
  rules: PoolRule[];
  marginals: CalibrationMarginal[];
}

/**
 * Draw inputs by model id, LRU, at most {@link DRAW_INPUTS_KEPT}; valid forever since metadata
 * never changes and ids are never reused (docs/decisions.md "Little garbage and setup per generate
 * request").
 */
const drawInputsCache = new Map<string, DrawInputs>();

const DRAW_INPUTS_KEPT = 8;

/**
 * Model `id`'s draw inputs for pool features `features` (layout order), cached or built.
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
 * The weights to generate from: a copy of the live actor's (after its own step in flight), the
 * idle cache, or the checkpoint (shape from `m`, the caller's read of the record).
 * @throws Error when metadata or a ready model's checkpoint is missing (e.g. deleted meanwhile).
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
 * Runs a generate task whose record was read and request checked by the caller
 * (`../generate-task.ts`); the record is read again only to tell a deleted model from a broken one.
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
      // Seeded: the model's conditional; with calibrate, corrected by the given marginals.
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
      // Keeps the fixed-combinations rules as the calibrated pool does (seed xor REPAIR_SEED_TAG).
      if (rules.length > 0) repairPool(cols, rules, (inputs.seed ^ REPAIR_SEED_TAG) >>> 0);
    }
    const n = cols[0].length;
    const codes = packedColumns(cols); // the draws' own F x n array where they have one (no copy)
    const reply: GenerateReply = { ok: true, model_id: task.id, num_rows: n, features: model.layout.features, codes };
    return move({ [transferableSymbol]: [codes.buffer], [valueSymbol]: reply } as unknown as Parameters<typeof move>[0]);
  } catch (err) {
    const bad = asParamError(err);
    if (bad) return { ok: false, kind: "param", param: bad.param, message: bad.message };
    if (task.latents !== undefined && isLogitOverflow(err)) {
      // Finite latents that overflow the forward pass: the client's input, not a model fault.
      return {
        ok: false,
        kind: "param",
        param: "body.embedding",
        message: "The latent vectors are too large for this model: its outputs overflow. Latents are standard normal draws (as the SDK makes them).",
      };
    }
    // Deleted while it ran: as if it had been gone before.
    if ((await getStore().getModel(task.id)) === undefined) return { ok: false, kind: "not_found", message: `no model ${task.id}` };
    return { ok: false, kind: "internal", message: err instanceof Error ? err.message : String(err) };
  } finally {
    lease.release();
  }
}

/** True for the sampling kernels' RangeError {@link LOGITS_NOT_FINITE} (JS and native paths). */
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
