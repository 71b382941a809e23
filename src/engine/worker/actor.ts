/**
 * The model actor: one per training model, in the worker thread the model is pinned to; owns its
 * state machine, training loop and weights. States (the contract's state table, from the worker):
 *
 *   starting --(trainer built from metadata [+ checkpoint])--> training
 *   training --(epoch done: updateModel(progress, checkpoint))--> training
 *   training --(max_epochs | early stop | max_training_time)--> ready (with the last checkpoint)
 *   starting|training --(exception, non-finite loss, bad checkpoint)--> failed (training_failed)
 *   starting|training --(store outage)--> paused, still `training`, until the store works again
 *   starting|training --(stop task / record deleted)--> stopped (nothing stored)
 *   starting|training --(halt: engine shutdown)--> stopped (stays `training` in the store)
 *
 * The loop awaits `yieldFn` between steps so other tasks of this worker run in between; every
 * store write is one atomic `updateModel`. Stop and halt take effect at the next step boundary.
 */
import { isStoreOutage, type Store } from "../../store";
import { Trainer, type ComputeKind, type GeneratorModel, type EpochReport } from "../../model";
import type { TrainReply } from "../protocol";

/** First wait (ms) of a training whose store write (or read) failed for a store outage. */
export const STORE_RETRY_FIRST_MS = 500;
/** Longest wait (ms) between two tries of a paused training's store write. */
export const STORE_RETRY_MAX_MS = 10_000;

/**
 * Wait (ms) before try `attempt` + 1 of a store operation that failed `attempt` (>= 1) times for
 * an outage: {@link STORE_RETRY_FIRST_MS} doubling to {@link STORE_RETRY_MAX_MS}. Also the
 * engine's wait before resuming a model whose worker died of a store outage.
 */
export function storeRetryDelay(attempt: number): number {
  return Math.min(STORE_RETRY_MAX_MS, STORE_RETRY_FIRST_MS * 2 ** Math.max(0, Math.min(attempt - 1, 20)));
}
/** {@link ModelActor.whenStoreWorks}: the model was stopped or halted while it waited. */
const ABORTED = Symbol("aborted");

export type ActorState = "starting" | "training" | "ready" | "failed" | "stopped";

/** What an actor needs from its worker. */
export interface ActorEnv {
  store: Store;
  /** Awaited between optimizer steps (e.g. `setImmediate`). */
  yieldFn: () => Promise<void>;
  log: (level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) => void;
  /** Compute path of the trainer (default `tfjs`). */
  compute?: ComputeKind;
}

/** The `error` stored on a failed model (`{ code, message }`, as the contract's Model shows it). */
export function trainingFailed(message: string): { code: string; message: string } {
  return { code: "training_failed", message };
}

/** One model's training actor. Create, then {@link ModelActor.start} once. */
export class ModelActor {
  state: ActorState = "starting";
  /** Set when training ended in `ready`: the best weights, owned by whoever takes them. */
  result: GeneratorModel | null = null;
  private trainer: Trainer | null = null;
  private abortKind: "stop" | "halt" | null = null;
  private done: Promise<TrainReply> | null = null;

  /** `fence`: the token every write carries; a refused write ends the actor `superseded`. */
  constructor(
    readonly id: string,
    private readonly env: ActorEnv,
    private readonly fence?: number,
  ) {}

  /** Runs the training loop to its end; resolves with the outcome (never rejects). */
  start(): Promise<TrainReply> {
    this.done ??= this.run();
    return this.done;
  }

  /**
   * Stops the loop at the next step boundary and waits for it. `stop` frees the model; `halt`
   * also leaves the stored status alone (`training`).
   */
  async abort(kind: "stop" | "halt"): Promise<void> {
    this.abortKind ??= kind;
    if (this.done) await this.done;
  }

  /**
   * A copy of the latest weights, or of the best (`best`: the store already shows `ready`), as a
   * generator the caller owns (`disposeGenerator`), after this model's own step in flight. Null
   * when no trainer is held or the loop ended meanwhile (the caller loads weights elsewhere).
   */
  async snapshot(best: boolean): Promise<GeneratorModel | null> {
    const trainer = this.state === "training" ? this.trainer : null;
    return trainer ? trainer.snapshot(best) : null;
  }

  private aborted(): boolean {
    return this.abortKind !== null;
  }

  private async run(): Promise<TrainReply> {
    const { store, log } = this.env;
    const id = this.id;
    try {
      const loaded = await this.whenStoreWorks(async () => {
        const rec = await store.getModel(id);
        if (rec === undefined || rec.status !== "training") return { rec };
        const metadata = await store.getMetadata(id);
        const checkpoint = await store.getCheckpoint<Parameters<typeof Trainer.create>[0]["checkpoint"]>(id);
        return { rec, metadata, checkpoint };
      });
      if (loaded === ABORTED) return this.endAborted();
      const { rec, metadata, checkpoint } = loaded;
      if (rec === undefined) return this.end("deleted");
      if (rec.status !== "training") return this.end("skipped");
      if (metadata === undefined) throw new Error("the model's metadata is missing");
      // A GPU model trains on a GPU where this worker has one, else on CPU (same checkpoint bytes).
      const device = rec.config.device === "cpu" ? "cpu" : "auto";
      this.trainer = await Trainer.create({ id, metadata, config: rec.config, checkpoint, compute: this.env.compute, device });
      if (this.trainer.computeNote) log("warn", this.trainer.computeNote, { model_id: id });
      if (this.aborted()) return this.endAborted();
      this.state = "training";
      log("info", checkpoint ? "training resumed" : "training started", {
        model_id: id,
        epoch: this.trainer.epoch,
        loss_form: this.trainer.lossForm,
        compute: this.trainer.compute,
      });

      let finished = this.trainer.stopReason(); // a checkpoint written after the last epoch
      while (finished === null) {
        const report = await this.trainer.runEpoch({ yieldFn: this.env.yieldFn, shouldAbort: () => this.aborted() });
        if (report === null) return this.endAborted();
        finished = report.done;
        const written = await this.persist(report);
        if (written === ABORTED) return this.endAborted();
        if (!written) return this.end(await this.goneOrSuperseded());
        log("debug", "epoch", {
          model_id: id,
          epoch: report.epoch,
          train_loss: report.trainLoss,
          val_loss: report.valLoss,
          ms_per_step: Math.round(report.msPerStep * 10) / 10,
        });
        if (finished === null && this.aborted()) return this.endAborted();
      }
      const marked = await this.whenStoreWorks(() => this.markReady());
      if (marked === ABORTED) return this.endAborted();
      if (marked === undefined) return this.end(await this.goneOrSuperseded());
      log("info", "training finished", {
        model_id: id,
        reason: finished,
        epoch: this.trainer.epoch,
        best_epoch: this.trainer.bestEpoch,
        val_loss: this.trainer.bestValLoss,
        elapsed_s: Math.round(this.trainer.elapsedS * 10) / 10,
      });
      const epoch = this.trainer.epoch;
      this.result = this.trainer.finish();
      this.trainer = null;
      this.state = "ready";
      return { outcome: "ready", epoch };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log("warn", "training failed", { model_id: id, error: message });
      this.release();
      this.state = "failed";
      try {
        // Waits out a store outage too: else the model would be left `training` with no loop.
        const stored = await this.whenStoreWorks(() => store.updateModel(id, { status: "failed", error: trainingFailed(message) }, undefined, this.fence));
        if (stored === ABORTED) return this.endAborted();
      } catch (e) {
        log("error", "could not store the failure", { model_id: id, error: String(e) });
      }
      return { outcome: "failed", message };
    }
  }

  /**
   * Runs a store operation; while the store is out ({@link isStoreOutage}) the training pauses
   * (state, checkpoint and `training` status kept) and retries after {@link storeRetryDelay},
   * since failing the model could not be written either. Resolves to {@link ABORTED} when stopped
   * or halted meanwhile; other errors are thrown.
   */
  private async whenStoreWorks<T>(op: () => Promise<T>): Promise<T | typeof ABORTED> {
    let failures = 0;
    for (;;) {
      try {
        const out = await op();
        if (failures > 0) this.env.log("info", "the store works again; training continues", { model_id: this.id, tries: failures + 1 });
        return out;
      } catch (err) {
        if (!isStoreOutage(err)) throw err;
        failures += 1;
        if (failures === 1) {
          this.env.log("warn", "cannot use the store (full or failing); training paused until it can", {
            model_id: this.id,
            error: (err as Error).message,
          });
        }
        const until = Date.now() + storeRetryDelay(failures);
        while (Date.now() < until) {
          if (this.aborted()) return ABORTED;
          await new Promise((r) => setTimeout(r, Math.min(250, Math.max(1, until - Date.now()))));
        }
        if (this.aborted()) return ABORTED;
      }
    }
  }

  /** One epoch's progress and checkpoint, atomically (the final one sets `ready`); false: gone. */
  private async persist(report: EpochReport): Promise<boolean | typeof ABORTED> {
    const trainer = this.trainer as Trainer;
    const patch = {
      current_epoch: report.epoch,
      train_loss: report.trainLoss,
      val_loss: report.valLoss,
      ...(report.done ? { status: "ready" as const, error: null } : {}),
    };
    const checkpoint = await trainer.checkpointInSlices(this.env.yieldFn);
    const rec = await this.whenStoreWorks(() => this.env.store.updateModel(this.id, patch, checkpoint, this.fence));
    return rec === ABORTED ? ABORTED : rec !== undefined;
  }

  /** For a checkpoint that was already final when loaded: only the status is missing. */
  private async markReady(): Promise<unknown> {
    const rec = await this.env.store.getModel(this.id);
    if (rec === undefined) return undefined;
    if (rec.status === "ready") return rec;
    return this.env.store.updateModel(this.id, { status: "ready", error: null }, undefined, this.fence);
  }

  /** Why a write updated nothing: the model is gone, or (fenced) another training claimed it. */
  private async goneOrSuperseded(): Promise<TrainReply["outcome"]> {
    if (this.fence === undefined) return "deleted";
    const rec = await this.whenStoreWorks(() => this.env.store.getModel(this.id));
    if (rec === ABORTED) return this.abortKind === "halt" ? "halted" : "stopped";
    return rec === undefined ? "deleted" : "superseded";
  }

  private end(outcome: TrainReply["outcome"]): TrainReply {
    this.release();
    this.state = "stopped";
    return { outcome };
  }

  /** {@link end} for an abort: `halted` (shutdown) or `stopped` (stop / delete), as asked. */
  private endAborted(): TrainReply {
    return this.end(this.abortKind === "halt" ? "halted" : "stopped");
  }

  private release(): void {
    this.trainer?.dispose();
    this.trainer = null;
  }
}
