/**
 * The local engine's memory budget: the estimate of a model, whether it can ever fit or its org
 * queue one more, and what the process holds beyond its base (measured RSS at start plus
 * headroom) and the reservations, which also counts against the budget ({@link measure}). The
 * queue is `queue.ts`; `../local-engine.ts` starts what it admits.
 */
import type { Metadata, ModelConfig } from "../../contract";
import { ModelTooLargeError, OrgQueueFullError } from "../engine";
import { BASE_HEADROOM_BYTES, formatBytes, WORKER_HEADROOM_BYTES } from "./budget";
import { estimateTrainingMemory, explainTooLarge, MAX_PARAMS, type EstimateOptions, type MemoryEstimate } from "./estimate";
import { AdmissionQueue, type QueueLimits } from "./queue";

/** Retry-After (seconds) of a create refused because the org's queue is full (429). */
export const QUEUE_FULL_RETRY_AFTER_S = 30;

/** The budget, the base and the queue of one local engine. */
export class MemoryAdmission {
  /** The admission queue; its budget is set once the base is measured ({@link setBase}). */
  readonly queue: AdmissionQueue;
  /** Reserved for the process itself (bytes): its RSS measured at start plus headroom. */
  baseBytes = 0;

  /** `estimateOptions`: compute path and threads assumed (may change once workers answer). */
  constructor(
    readonly budgetBytes: number,
    limits: Pick<QueueLimits, "maxTrainingPerOrg" | "maxQueuedPerOrg">,
    private readonly estimateOptions: () => EstimateOptions,
  ) {
    this.queue = new AdmissionQueue({ budgetBytes: 0, ...limits });
  }

  estimate(config: ModelConfig, metadata: Metadata): MemoryEstimate {
    return estimateTrainingMemory(config, metadata, this.estimateOptions());
  }

  /** How the training budget came about, for messages. */
  private budgetNote(): string {
    return `a memory budget of ${formatBytes(this.budgetBytes)} less ${formatBytes(this.baseBytes)} for the server itself`;
  }

  /** The error for a model that can never train here, or undefined when it can. */
  tooLarge(config: ModelConfig, metadata: Metadata, est: MemoryEstimate): ModelTooLargeError | undefined {
    if (est.params <= MAX_PARAMS && this.queue.canEverFit(est.bytes)) return undefined;
    const budget = this.queue.currentLimits.budgetBytes;
    const { param, message } = explainTooLarge(config, metadata, budget, this.budgetNote(), this.estimateOptions());
    return new ModelTooLargeError(message, param, est.bytes, budget);
  }

  /**
   * `Engine.admissionCheck`: refuses a model that can never fit or would wait past its org's
   * limit; else holds its place. @throws ModelTooLargeError, OrgQueueFullError.
   */
  check(config: ModelConfig, metadata: Metadata, org: string): void {
    const est = this.estimate(config, metadata);
    const tooLarge = this.tooLarge(config, metadata, est);
    if (tooLarge) throw tooLarge;
    this.measure();
    if (this.queue.probe(org, est.bytes) === "full") {
      const n = this.queue.currentLimits.maxQueuedPerOrg;
      const reason =
        n === 0
          ? "The model cannot start now (the server's training memory or your organization's training slots are in use) and this server queues no models"
          : `Your organization already has ${n} model${n === 1 ? "" : "s"} waiting to train, the most this server queues per organization`;
      throw new OrgQueueFullError(`${reason}.`, n, QUEUE_FULL_RETRY_AFTER_S);
    }
    this.queue.hold(org, est.bytes, estimateKey(config));
  }

  /** Measures what the process holds beyond its base and the reservations. */
  measure(): void {
    const rss = process.memoryUsage.rss();
    this.queue.setUnaccounted(rss - (this.baseBytes - BASE_HEADROOM_BYTES) - this.queue.reservedBytes);
  }

  /**
   * Sets the base from RSS once every worker is up; returns the training budget (bytes).
   * @throws Error when the memory budget leaves nothing for training.
   */
  setBase(startRss: number, workers: number): number {
    this.baseBytes = startRss + BASE_HEADROOM_BYTES + workers * WORKER_HEADROOM_BYTES;
    const training = this.budgetBytes - this.baseBytes;
    if (training <= 0) {
      throw new Error(
        `the memory budget of ${formatBytes(this.budgetBytes)} leaves nothing for training: the server itself takes ` +
          `${formatBytes(this.baseBytes)} (RSS ${formatBytes(startRss)} at start, plus headroom); raise --memory-budget or lower --workers`,
      );
    }
    this.queue.setBudget(training);
    return training;
  }
}

/** What a hold's estimate was computed from besides the metadata: the config fields it reads. */
export function estimateKey(c: ModelConfig): string {
  return JSON.stringify([c.model_size, c.embedding_dim, c.batch_size, c.privacy_enabled, c.privacy_noise]);
}
