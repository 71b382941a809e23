/**
 * The local engine's piscina load balancer: a model is pinned on its first task to the live worker
 * with the fewest training (then pinned) models; its later tasks go there (actor and weights).
 */
import { queueOptionsSymbol, type Piscina } from "piscina";
import type { Task } from "./protocol";

/** A task carrying its model id where the load balancer can read it (piscina's queue options). */
export type QueueTagged = { [queueOptionsSymbol]?: { modelId?: string } };
/** piscina's view of a worker as the load balancer sees it (the type is not exported by name). */
export type PWorker = Parameters<NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>["loadBalancer"]>>[1][number];

/** `task` tagged with its model id, for {@link place}. */
export function tagTask(task: Task, modelId: string | undefined): Task & QueueTagged {
  return { ...task, [queueOptionsSymbol]: { modelId } };
}

/**
 * The worker `task`'s model is pinned to (`pins`: model id -> thread id), else the least loaded
 * live one, then pinned; a task without a model: least work. Null when none is live.
 */
export function place(pins: Map<string, number>, isTraining: (id: string) => boolean, task: QueueTagged, workers: PWorker[]): PWorker | null {
  const live = workers.filter((w) => !w.terminating && !w.destroyed);
  if (live.length === 0) return null;
  const id = task[queueOptionsSymbol]?.modelId;
  if (id === undefined) return live.reduce((a, b) => (b.currentUsage < a.currentUsage ? b : a));
  const pinned = pins.get(id);
  const hit = pinned === undefined ? undefined : live.find((w) => w.id === pinned);
  if (hit) return hit;
  const trainingOn = new Map<number, number>();
  const pinnedOn = new Map<number, number>();
  for (const [m, t] of pins) {
    pinnedOn.set(t, (pinnedOn.get(t) ?? 0) + 1);
    if (isTraining(m)) trainingOn.set(t, (trainingOn.get(t) ?? 0) + 1);
  }
  const score = (w: PWorker): number => (trainingOn.get(w.id) ?? 0) * 1e6 + (pinnedOn.get(w.id) ?? 0);
  const chosen = live.reduce((a, b) => (score(b) < score(a) ? b : a));
  pins.set(id, chosen.id);
  return chosen;
}
