/**
 * Large request bodies are parsed and validated on a small piscina pool (`bodyWorker.ts`): for a
 * body of megabytes that takes seconds of CPU, during which the HTTP thread would answer no one.
 *
 * Fairness: each organization's large bodies go to the pool one at a time, so one tenant's stream
 * delays another's by at most one body. Past {@link MAX_LARGE_BODIES_PER_ORG} waiting, an org gets
 * 429 `rate_limit_exceeded` with `Retry-After`, which bounds the memory its bodies hold.
 */
import { availableParallelism } from "node:os";
import path from "node:path";
import { Piscina } from "piscina";
import { ApiError } from "../contract/errors";
import type { BodyOutcome, BodyRoute, BodyTask, Ctx } from "./context";
import { fingerprintPrefix } from "./steps/idempotency";
import { ClientAbortedError } from "./errors";

/** Bodies larger than this (bytes) are parsed on the body worker threads: 64 KiB. */
export const OFF_THREAD_BODY_BYTES = 64 * 1024;

/** Large bodies an organization may have waiting or being parsed at once; more get 429. */
export const MAX_LARGE_BODIES_PER_ORG = 4;

/** Seconds in the `Retry-After` of that 429. */
const RETRY_AFTER_S = 1;

/** Routes whose bodies the worker knows (`bodyWorker.ts` BODY_ROUTES; the worker module is not loaded here). */
const ROUTES: ReadonlySet<string> = new Set<BodyRoute>(["POST /v1/models", "POST /v1/models/:model_id/generate"]);

let pool: Piscina | undefined;

/** The pool, started on first use: one thread per spare core, at most two; idle threads exit after a minute. */
function bodyPool(): Piscina {
  pool ??= new Piscina({
    filename: path.join(__dirname, "bodyWorker.js"),
    minThreads: 0,
    maxThreads: Math.max(1, Math.min(2, availableParallelism() - 1)),
    idleTimeout: 60_000,
    atomics: "disabled",
  });
  return pool;
}

/** Per organization: its large bodies waiting or being parsed, and the end of the last one's turn. */
const lines = new Map<string, { count: number; tail: Promise<void> }>();

/** True when `route` (`METHOD pattern`) has its large bodies parsed off-thread. */
export function parsesOffThread(route: string): route is BodyRoute {
  return ROUTES.has(route);
}

/**
 * Parses and validates `bytes` on a body worker after the org's earlier large bodies. `bytes`'
 * memory is transferred: do not use it afterwards.
 * @throws ApiError 429 when the org's line is full; `ClientAbortedError` if the client left.
 */
export async function parseOffThread(ctx: Ctx, route: BodyRoute, bytes: Buffer): Promise<BodyOutcome> {
  const org = ctx.auth?.org ?? "";
  let line = lines.get(org);
  if (line !== undefined && line.count >= MAX_LARGE_BODIES_PER_ORG) throw lineFull();
  if (line === undefined) lines.set(org, (line = { count: 0, tail: Promise.resolve() }));
  const mine = line;
  mine.count++;
  const before = mine.tail;
  let done!: () => void;
  mine.tail = new Promise<void>((resolve) => (done = resolve));
  try {
    await before;
    if (ctx.aborted) throw new ClientAbortedError();
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : Uint8Array.prototype.slice.call(bytes);
    const task: BodyTask = { route, bytes: own };
    if (ctx.headers["idempotency-key"] !== undefined) task.fingerprintPrefix = fingerprintPrefix(ctx);
    return (await bodyPool().run(task, { transferList: [own.buffer as ArrayBuffer] })) as BodyOutcome;
  } finally {
    done();
    if (--mine.count === 0) lines.delete(org);
  }
}

/** Refuses a declared large body before it is read (so drained, not buffered) on a full line. */
export function refuseWhenLineFull(ctx: Ctx): void {
  const declared = Number(ctx.headers["content-length"] ?? 0);
  if (!(declared > OFF_THREAD_BODY_BYTES) || !parsesOffThread(`${ctx.method} ${ctx.route?.def.pattern ?? ""}`)) return;
  const line = lines.get(ctx.auth?.org ?? "");
  if (line !== undefined && line.count >= MAX_LARGE_BODIES_PER_ORG) throw lineFull();
}

function lineFull(): ApiError {
  return new ApiError(
    "rate_limit_exceeded",
    `This organization already has ${MAX_LARGE_BODIES_PER_ORG} request bodies over ${OFF_THREAD_BODY_BYTES / 1024} KiB being processed. ` +
      `Retry after ${RETRY_AFTER_S} second${RETRY_AFTER_S === 1 ? "" : "s"}.`,
    undefined,
    { "Retry-After": String(RETRY_AFTER_S) },
  );
}
