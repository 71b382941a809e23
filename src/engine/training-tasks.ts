/**
 * The local engine's training tasks: each admitted model's task on its worker, and its end. An
 * ended task releases the reservation and advances the queue; one lost with its worker resumes
 * from the last checkpoint (at most {@link MAX_TRAIN_RESTARTS} times, then `failed`), or after a
 * backoff without limit when the worker died of a store outage. docs/architecture.md "The local
 * engine".
 */
import type { Logger } from "pino";
import { isStoreOutage, type ModelRecord, type Store } from "../store";
import { storeRetryDelay, trainingFailed } from "./worker/actor";
import type { AdmissionQueue } from "./admission/queue";
import { MAX_TRAIN_RESTARTS } from "./pool-engine";
import type { Task, TrainReply } from "./protocol";

/** What the training tasks need of their engine. */
export interface TrainingHost {
  readonly store: Store;
  readonly log: Logger | undefined;
  readonly queue: AdmissionQueue;
  readonly pins: Map<string, number>;
  isClosed(): boolean;
  /** True when the pool's task queue is at its bound. */
  queueFull(): boolean;
  run<R>(task: Task, modelId: string): Promise<R>;
  current(id: string): Promise<ModelRecord | undefined>;
  pump(): void;
}

type Outcome = TrainReply["outcome"];

export class TrainingTasks {
  /**
   * Models with a pending training task. Each holds a reservation until its task is over, so
   * "running in the queue" is the test for "training or about to be resumed".
   */
  private readonly tasks = new Map<string, Promise<TrainReply>>();
  private readonly restarts = new Map<string, number>();
  /** Tasks in a row lost to store-outage worker deaths, per model (backoff). */
  private readonly outageLosses = new Map<string, number>();
  /** Models waiting to be resumed after such a loss (reservations held). */
  private readonly resumeTimers = new Map<string, NodeJS.Timeout>();
  /** Fencing tokens of trainings started with one (shared store). */
  private readonly fences = new Map<string, number>();
  private readonly waiters = new Map<string, ((outcome: Outcome) => void)[]>();
  /** The last task's outcome per model, until its waiters are settled. */
  private readonly outcomes = new Map<string, Outcome>();

  constructor(private readonly host: TrainingHost) {}

  has(id: string): boolean {
    return this.tasks.has(id);
  }

  ids(): string[] {
    return [...this.tasks.keys()];
  }

  get size(): number {
    return this.tasks.size;
  }

  task(id: string): Promise<TrainReply> | undefined {
    return this.tasks.get(id);
  }

  setFence(id: string, fence: number): void {
    this.fences.set(id, fence);
  }

  /** Runs an admitted model's task (its reservation is held until {@link finish}). */
  start(id: string): void {
    const fence = this.fences.get(id);
    const p = this.host.run<TrainReply>({ op: "train", id, ...(fence === undefined ? {} : { fence }) }, id);
    this.tasks.set(id, p);
    p.then(
      (reply) => this.ended(id, p, reply),
      (err: unknown) => this.lost(id, p, err),
    ).catch((err: unknown) => this.host.log?.error({ model_id: id, err }, "training bookkeeping failed"));
  }

  /** The model's training is over here: its reservation is released and the queue advances. */
  finish(id: string): void {
    this.settle(id);
    const { queue, log } = this.host;
    if (queue.release(id)) {
      log?.info(
        { model_id: id, reserved_total: queue.reservedBytes, running: this.tasks.size, waiting: queue.waitingCount },
        "training reservation released",
      );
      this.host.pump();
    }
  }

  private async ended(id: string, p: Promise<TrainReply>, reply: TrainReply): Promise<void> {
    if (this.tasks.get(id) === p) this.tasks.delete(id);
    this.outcomes.set(id, reply.outcome);
    this.host.log?.debug({ model_id: id, outcome: reply.outcome, epoch: reply.epoch, message: reply.message }, "training task ended");
    if (reply.outcome === "deleted" && !this.host.isClosed() && (await this.host.current(id))?.status === "training") {
      // The worker missed a record that exists (it renews its snapshot per task, so unexpected).
      await this.lost(id, p, new Error("the worker could not read the model's record"));
      return;
    }
    if (reply.outcome !== "ready" && reply.outcome !== "skipped") this.host.pins.delete(id);
    if (reply.outcome === "ready" || reply.outcome === "failed") this.restarts.delete(id);
    this.outageLosses.delete(id);
    this.finish(id);
  }

  /**
   * The task was lost with its worker: resume (keeping the reservation: the new task allocates
   * again) or fail and release.
   */
  private async lost(id: string, p: Promise<TrainReply>, err: unknown): Promise<void> {
    const { host } = this;
    if (this.tasks.get(id) === p) this.tasks.delete(id);
    host.pins.delete(id);
    if (host.isClosed()) return;
    const message = err instanceof Error ? err.message : String(err);
    const rec = await host.current(id);
    if (host.isClosed()) return;
    if (rec === undefined || rec.status !== "training") {
      this.finish(id);
      return;
    }
    if (isStoreOutage(err)) {
      // The store, not the model: resume later, not counted toward the restart limit.
      const k = (this.outageLosses.get(id) ?? 0) + 1;
      this.outageLosses.set(id, k);
      const delay = storeRetryDelay(k);
      host.log?.warn({ model_id: id, err: message, delay_ms: delay }, "training worker lost to a store outage (full disk?); resuming from the last checkpoint after a pause");
      this.resumeLater(id, delay);
      return;
    }
    const n = (this.restarts.get(id) ?? 0) + 1;
    this.restarts.set(id, n);
    if (n > MAX_TRAIN_RESTARTS) {
      this.outcomes.set(id, "failed");
      this.markFailed(id, `the training worker thread exited unexpectedly ${n} times (last: ${message})`);
      this.finish(id);
    } else if (host.queueFull()) {
      this.outcomes.set(id, "failed");
      this.markFailed(id, "training could not be resumed: the engine's queue is full");
      this.finish(id);
    } else {
      host.log?.warn({ model_id: id, err: message, attempt: n }, "training worker lost; resuming from the last checkpoint");
      this.start(id);
    }
  }

  /** Restarts `id`'s task after `delayMs` unless closed, stopped or no longer `training`. */
  private resumeLater(id: string, delayMs: number): void {
    const { host } = this;
    clearTimeout(this.resumeTimers.get(id));
    const timer = setTimeout(() => {
      if (this.resumeTimers.get(id) !== timer) return;
      this.resumeTimers.delete(id);
      if (host.isClosed()) return;
      void (async () => {
        let rec: ModelRecord | undefined;
        try {
          rec = await host.current(id);
        } catch (err) {
      // A shared store unreadable now: wait again. Else let the task find out.
          if (isStoreOutage(err)) {
            this.resumeLater(id, storeRetryDelay((this.outageLosses.get(id) ?? 0) + 1));
            return;
          }
          if (!host.isClosed() && !this.tasks.has(id)) this.start(id);
          return;
        }
        if (host.isClosed() || this.tasks.has(id)) return;
        if (rec?.status !== "training") {
          this.outageLosses.delete(id);
          this.finish(id);
        } else this.start(id);
      })().catch((err: unknown) => host.log?.error({ model_id: id, err }, "training bookkeeping failed"));
    }, delayMs);
    this.resumeTimers.set(id, timer);
  }

  /** Stores model `id` as `failed` with `message`, if it is still `training`. */
  markFailed(id: string, message: string): void {
    const { host } = this;
    host.log?.error({ model_id: id, err: message }, "training failed");
    void (async () => {
      const rec = await host.current(id);
      if (rec?.status !== "training") return;
      await host.store.updateModel(id, { status: "failed", error: trainingFailed(message) });
    })().catch((e: unknown) => host.log?.error({ model_id: id, err: e }, "could not store a training failure"));
  }

  /** A stop of `id`: one paused after a store-outage loss is released now (nothing runs). */
  stopPaused(id: string): void {
    const resume = this.resumeTimers.get(id);
    if (resume === undefined) return;
    clearTimeout(resume);
    this.resumeTimers.delete(id);
    this.outageLosses.delete(id);
    this.outcomes.set(id, "stopped");
    this.host.pins.delete(id);
    this.finish(id);
  }

  forget(id: string): void {
    this.restarts.delete(id);
  }

  waitForEnd(id: string): Promise<Outcome> {
    return new Promise<Outcome>((resolve) => {
      const list = this.waiters.get(id) ?? [];
      list.push(resolve);
      this.waiters.set(id, list);
    });
  }

  settle(id: string, outcome?: Outcome): void {
    const list = this.waiters.get(id);
    const last = outcome ?? this.outcomes.get(id) ?? "stopped";
    this.outcomes.delete(id);
    this.fences.delete(id);
    if (list === undefined) return;
    this.waiters.delete(id);
    for (const resolve of list) resolve(last);
  }

  /** Shutdown: resuming models stay `training` (resumed next start); returns tasks to halt. */
  closing(): [string, Promise<TrainReply>][] {
    for (const t of this.resumeTimers.values()) clearTimeout(t);
    this.resumeTimers.clear();
    return [...this.tasks.entries()];
  }

  closed(): void {
    for (const id of [...this.waiters.keys()]) this.settle(id, "halted");
  }
}
