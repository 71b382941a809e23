/**
 * Admission control, part 2: which waiting model starts next. Pure bookkeeping, no
 * I/O: the engine (`index.ts`) asks it and starts the training tasks it names.
 *
 * State: the training budget (bytes), the running models with their reservations (their memory
 * estimates, `admission.ts`), and the waiting models in create order.
 *
 * Policy ({@link AdmissionQueue.admit}), one pass over the waiting models, oldest first:
 * - a model whose org already runs `maxTrainingPerOrg` models is skipped: it waits, and it does
 *   not hold back the models of other orgs behind it;
 * - otherwise, a model whose reservation fits in the free budget starts (its bytes are reserved);
 * - otherwise the pass stops: a model that does not fit holds back every model behind it, so a
 *   stream of small models cannot starve a big one (it starts once enough running models end).
 * A reservation is released when its model ends (ready, failed, stopped, deleted), and the engine
 * runs the pass again. The free budget is the budget less the reservations and less the memory
 * the engine measured beyond them ({@link AdmissionQueue.setUnaccounted}: what finished models
 * left behind).
 *
 * Create Model asks first ({@link AdmissionQueue.probe}): would the model start now, wait, or
 * would it be one more waiting model than `maxQueuedPerOrg` allows (then it is refused)? Between
 * that answer and the model's {@link AdmissionQueue.enqueue} the create stores the record, so the
 * answer is remembered as a *hold* ({@link AdmissionQueue.hold}) that later probes count as a
 * waiting model of that org. The engine claims it ({@link AdmissionQueue.claimHold}) when it
 * queues the model, and reuses its estimate when that is unambiguous (so it need not read the
 * model's metadata back on the HTTP thread); a hold nobody claims (the create failed) expires
 * after {@link HOLD_TTL_MS}.
 */

export { DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG } from "./defaults";

/** A model waiting for, or holding, part of the training budget. */
export interface Ticket {
  /** Model id. */
  id: string;
  /** Its organization (the unit of the per-org limits). */
  org: string;
  /** Its memory estimate, bytes. */
  bytes: number;
  /** Create time, ms since the epoch: the queue's order. */
  createdMs: number;
}

/** The limits the queue enforces. */
export interface QueueLimits {
  /** Bytes the running models' reservations may sum to. */
  budgetBytes: number;
  /** Running models per org, >= 1. */
  maxTrainingPerOrg: number;
  /** Waiting models per org, >= 0 (0: a create that cannot start at once is refused). */
  maxQueuedPerOrg: number;
}

/** What {@link AdmissionQueue.probe} says about a new model. */
export type ProbeResult = "start" | "wait" | "full";

/** How long an unconsumed hold counts (ms). */
export const HOLD_TTL_MS = 60_000;

interface Hold {
  org: string;
  /** What the estimate was computed from, beyond the metadata (the engine's choice). */
  key: string;
  bytes: number;
  expiresMs: number;
}

/** The waiting and running models and the policy of the module comment. */
export class AdmissionQueue {
  /** Waiting models in queue order (`createdMs`, ties by arrival). */
  private readonly waiting: Ticket[] = [];
  /** Ids of {@link waiting}, so that membership is O(1) with thousands of waiting models. */
  private readonly waitingSet = new Set<string>();
  private readonly running = new Map<string, Ticket>();
  private holds: Hold[] = [];
  private unaccounted = 0;

  /**
   * @param limits the limits (the engine may change `budgetBytes` later with {@link setBudget}).
   * @param now clock for holds (tests pass their own).
   * @throws RangeError for limits out of range.
   */
  constructor(
    private limits: QueueLimits,
    private readonly now: () => number = Date.now,
  ) {
    checkLimits(limits);
  }

  /** The limits in force. */
  get currentLimits(): Readonly<QueueLimits> {
    return this.limits;
  }

  /** Changes the training budget (e.g. after re-measuring the server's own memory). */
  setBudget(bytes: number): void {
    this.limits = { ...this.limits, budgetBytes: Math.max(0, bytes) };
  }

  /**
   * Memory the process holds beyond its base and the running models' reservations (retained by
   * models that ended: caches, buffers, garbage not yet collected), as the engine measured it. It
   * reduces the free budget until it is measured again.
   */
  setUnaccounted(bytes: number): void {
    this.unaccounted = Math.max(0, bytes);
  }

  /** The memory last set with {@link setUnaccounted}, bytes. */
  get unaccountedBytes(): number {
    return this.unaccounted;
  }

  /** Bytes the running models' reservations may still grow by (budget - reserved - unaccounted). */
  get freeBytes(): number {
    return this.limits.budgetBytes - this.reservedBytes - this.unaccounted;
  }

  /**
   * True when the policy's pass ({@link admit}) stops at a waiting model that does not fit in what
   * is free (after an `admit`: the first waiting model not held back by its org's limit); it would
   * fit without the unaccounted memory when `becauseUnaccounted`. Changes nothing.
   */
  headBlocked(): { blocked: boolean; becauseUnaccounted: boolean } {
    const { blocker, free } = plan(this.waiting, this.runningPerOrg(), this.freeBytes, this.limits);
    if (blocker === undefined) return { blocked: false, becauseUnaccounted: false };
    return { blocked: true, becauseUnaccounted: blocker.bytes <= free + this.unaccounted };
  }

  /** Bytes reserved by running models. */
  get reservedBytes(): number {
    let s = 0;
    for (const t of this.running.values()) s += t.bytes;
    return s;
  }

  /** True when `bytes` fits in the whole budget (else the model can never start). */
  canEverFit(bytes: number): boolean {
    return bytes <= this.limits.budgetBytes;
  }

  /** True while `id` holds a reservation (admitted or adopted, not yet released). */
  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  /** True while `id` waits in the queue. */
  isWaiting(id: string): boolean {
    return this.waitingSet.has(id);
  }

  /** Running models, in start order. */
  runningTickets(): Ticket[] {
    return [...this.running.values()];
  }

  /** Number of waiting models. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Waiting models, in queue order. */
  waitingTickets(): Ticket[] {
    return [...this.waiting];
  }

  /**
   * Would a new model of `org` needing `bytes` start at once (`start`), wait (`wait`), or exceed
   * the org's `maxQueuedPerOrg` waiting models (`full`)? Counts the unexpired holds as models
   * queued after the waiting ones. Changes nothing.
   */
  probe(org: string, bytes: number): ProbeResult {
    this.expireHolds();
    const candidate: Ticket = { id: "\0candidate", org, bytes, createdMs: Infinity };
    const pending: Ticket[] = this.holds.map((h) => ({ id: "\0hold", org: h.org, bytes: h.bytes, createdMs: Infinity }));
    const order = [...this.waiting, ...pending, candidate];
    const { admitted } = plan(order, this.runningPerOrg(), this.freeBytes, this.limits);
    if (admitted.has(candidate)) return "start";
    const waitingOfOrg = order.filter((t) => t.org === org && !admitted.has(t)).length;
    return waitingOfOrg > this.limits.maxQueuedPerOrg ? "full" : "wait";
  }

  /**
   * Remembers an accepted create of `org` needing `bytes` until it is claimed
   * ({@link claimHold}) or {@link HOLD_TTL_MS} passes. `key` identifies the config the estimate
   * was computed from.
   */
  hold(org: string, bytes: number, key = ""): void {
    this.expireHolds();
    this.holds.push({ org, key, bytes, expiresMs: this.now() + HOLD_TTL_MS });
  }

  /**
   * Consumes the oldest unexpired hold of (`org`, `key`), if any. Returns its bytes when every such
   * hold agrees on them (so the model being queued needed exactly that), else undefined (no hold,
   * or concurrent creates of the same config with different metadata: the caller estimates again).
   */
  claimHold(org: string, key = ""): number | undefined {
    this.expireHolds();
    const mine = this.holds.filter((h) => h.org === org && h.key === key);
    if (mine.length === 0) return undefined;
    this.holds.splice(this.holds.indexOf(mine[0]), 1);
    return mine.every((h) => h.bytes === mine[0].bytes) ? mine[0].bytes : undefined;
  }

  /**
   * Adds a model to the waiting models, in `createdMs` order (ties: arrival order). A model
   * already waiting or running is left as it is.
   * @throws RangeError when `bytes` exceeds the whole budget (it could never start).
   */
  enqueue(t: Ticket): void {
    if (this.running.has(t.id) || this.isWaiting(t.id)) return;
    if (!this.canEverFit(t.bytes)) throw new RangeError(`model ${t.id} needs ${t.bytes} bytes; the budget is ${this.limits.budgetBytes}`);
    let i = this.waiting.length;
    while (i > 0 && this.waiting[i - 1].createdMs > t.createdMs) i--;
    this.waiting.splice(i, 0, { ...t });
    this.waitingSet.add(t.id);
  }

  /** Runs the policy: moves the models that start now from waiting to running and returns them (in order). */
  admit(): Ticket[] {
    const { admitted } = plan(this.waiting, this.runningPerOrg(), this.freeBytes, this.limits);
    for (const t of admitted) {
      this.waiting.splice(this.waiting.indexOf(t), 1);
      this.waitingSet.delete(t.id);
      this.running.set(t.id, t);
    }
    return [...admitted];
  }

  /** Marks `id` as running without queueing it (a training task already under way). */
  adopt(t: Ticket): void {
    this.remove(t.id);
    this.running.set(t.id, t);
  }

  /** Ends a running model's reservation. Returns false when it held none. */
  release(id: string): boolean {
    return this.running.delete(id);
  }

  /** Removes a waiting model (e.g. deleted). Returns false when it was not waiting. */
  remove(id: string): boolean {
    if (!this.waitingSet.delete(id)) return false;
    this.waiting.splice(this.waiting.findIndex((t) => t.id === id), 1);
    return true;
  }

  private runningPerOrg(): Map<string, number> {
    const m = new Map<string, number>();
    for (const t of this.running.values()) m.set(t.org, (m.get(t.org) ?? 0) + 1);
    return m;
  }

  private expireHolds(): void {
    const now = this.now();
    this.holds = this.holds.filter((h) => h.expiresMs > now);
  }
}

/**
 * The policy's pass (module comment) over `order`, given the running models per org and the free
 * bytes: the tickets that start (a Set, in order), the one the pass stopped at because it does not
 * fit (undefined when it ran to the end), and the bytes left free after the started ones.
 */
function plan(
  order: readonly Ticket[],
  runningPerOrg: Map<string, number>,
  freeBytes: number,
  limits: QueueLimits,
): { admitted: Set<Ticket>; blocker: Ticket | undefined; free: number } {
  const perOrg = new Map(runningPerOrg);
  let free = freeBytes;
  const admitted = new Set<Ticket>();
  for (const t of order) {
    if ((perOrg.get(t.org) ?? 0) >= limits.maxTrainingPerOrg) continue;
    if (t.bytes > free) return { admitted, blocker: t, free };
    free -= t.bytes;
    perOrg.set(t.org, (perOrg.get(t.org) ?? 0) + 1);
    admitted.add(t);
  }
  return { admitted, blocker: undefined, free };
}

function checkLimits(l: QueueLimits): void {
  if (!(l.budgetBytes >= 0)) throw new RangeError("budgetBytes must be >= 0");
  if (!(Number.isInteger(l.maxTrainingPerOrg) && l.maxTrainingPerOrg >= 1)) throw new RangeError("maxTrainingPerOrg must be an integer >= 1");
  if (!(Number.isInteger(l.maxQueuedPerOrg) && l.maxQueuedPerOrg >= 0)) throw new RangeError("maxQueuedPerOrg must be an integer >= 0");
}
