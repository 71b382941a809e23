/**
 * Admission control, part 2: which waiting model starts next (pure bookkeeping; the engine,
 * `index.ts`, starts the tasks it names). Policy ({@link AdmissionQueue.admit}), one pass over the
 * waiting models, oldest first: a model whose org runs `maxTrainingPerOrg` models is skipped
 * (without holding back other orgs); else one that fits the free budget starts; else the pass
 * stops, so a stream of small models cannot starve a big one. Free = budget - reservations -
 * unaccounted memory ({@link AdmissionQueue.setUnaccounted}).
 * Create Model probes first; between the answer and the enqueue it stores the record, so the
 * answer is kept as a *hold* that later probes count as a waiting model of that org, claimed at
 * enqueue (its estimate reused, sparing a metadata read on the HTTP thread) or expired after
 * {@link HOLD_TTL_MS}.
 */

export { DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG } from "./defaults";

/** A model waiting for, or holding, part of the training budget. */
export interface Ticket {
  id: string;
  /** Its organization (the unit of the per-org limits). */
  org: string;
  /** Memory estimate, bytes. */
  bytes: number;
  /** Create time, ms since the epoch: the queue's order. */
  createdMs: number;
}

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
  /** What the estimate was computed from beyond the metadata (the engine's choice). */
  key: string;
  bytes: number;
  expiresMs: number;
}

/** The waiting and running models and the policy of the module comment. */
export class AdmissionQueue {
  /** Waiting models in queue order (`createdMs`, ties by arrival). */
  private readonly waiting: Ticket[] = [];
  /** Ids of {@link waiting}: O(1) membership with thousands waiting. */
  private readonly waitingSet = new Set<string>();
  private readonly running = new Map<string, Ticket>();
  private holds: Hold[] = [];
  private unaccounted = 0;

  /** `now`: clock for holds. @throws RangeError for limits out of range. */
  constructor(
    private limits: QueueLimits,
    private readonly now: () => number = Date.now,
  ) {
    checkLimits(limits);
  }

  get currentLimits(): Readonly<QueueLimits> {
    return this.limits;
  }

  /** Changes the training budget (e.g. after re-measuring the server's own memory). */
  setBudget(bytes: number): void {
    this.limits = { ...this.limits, budgetBytes: Math.max(0, bytes) };
  }

  /** Memory measured beyond the base and the reservations (left by ended models); reduces free. */
  setUnaccounted(bytes: number): void {
    this.unaccounted = Math.max(0, bytes);
  }

  get unaccountedBytes(): number {
    return this.unaccounted;
  }

  get freeBytes(): number {
    return this.limits.budgetBytes - this.reservedBytes - this.unaccounted;
  }

  /**
   * Whether the policy's pass stops at a waiting model that does not fit; `becauseUnaccounted`:
   * it would fit without the unaccounted memory. Changes nothing.
   */
  headBlocked(): { blocked: boolean; becauseUnaccounted: boolean } {
    const { blocker, free } = plan(this.waiting, this.runningPerOrg(), this.freeBytes, this.limits);
    if (blocker === undefined) return { blocked: false, becauseUnaccounted: false };
    return { blocked: true, becauseUnaccounted: blocker.bytes <= free + this.unaccounted };
  }

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

  isWaiting(id: string): boolean {
    return this.waitingSet.has(id);
  }

  /** Running models, in start order. */
  runningTickets(): Ticket[] {
    return [...this.running.values()];
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  waitingTickets(): Ticket[] {
    return [...this.waiting];
  }

  /**
   * Would a new model of `org` needing `bytes` `start` at once, `wait`, or exceed its
   * `maxQueuedPerOrg` (`full`)? Unexpired holds count as queued after the waiting. Changes nothing.
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

  /** Remembers an accepted create until claimed or {@link HOLD_TTL_MS}; `key`: the config's. */
  hold(org: string, bytes: number, key = ""): void {
    this.expireHolds();
    this.holds.push({ org, key, bytes, expiresMs: this.now() + HOLD_TTL_MS });
  }

  /**
   * Consumes the oldest unexpired hold of (`org`, `key`). Returns its bytes when all such holds
   * agree, else undefined (concurrent creates with different metadata: the caller estimates again).
   */
  claimHold(org: string, key = ""): number | undefined {
    this.expireHolds();
    const mine = this.holds.filter((h) => h.org === org && h.key === key);
    if (mine.length === 0) return undefined;
    this.holds.splice(this.holds.indexOf(mine[0]), 1);
    return mine.every((h) => h.bytes === mine[0].bytes) ? mine[0].bytes : undefined;
  }

  /**
   * Adds a model in `createdMs` order (ties: arrival); one already waiting or running is left.
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

  /** Runs the policy: moves the models that start now to running and returns them, in order. */
  admit(): Ticket[] {
    const { admitted } = plan(this.waiting, this.runningPerOrg(), this.freeBytes, this.limits);
    for (const t of admitted) {
      this.waiting.splice(this.waiting.indexOf(t), 1);
      this.waitingSet.delete(t.id);
      this.running.set(t.id, t);
    }
    return [...admitted];
  }

  /** Marks `id` running without queueing it (a training task already under way). */
  adopt(t: Ticket): void {
    this.remove(t.id);
    this.running.set(t.id, t);
  }

  /** Ends a running model's reservation. Returns false when it held none. */
  release(id: string): boolean {
    return this.running.delete(id);
  }

  /** Removes a waiting model. Returns false when it was not waiting. */
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
 * The policy's pass over `order`: the tickets that start (in order), the one it stopped at
 * (undefined when it ran to the end) and the bytes left free after the started ones.
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
