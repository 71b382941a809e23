/**
 * The body worker (a piscina task handler, `bodyPool.ts`): parses and validates one large body
 * with the pipeline's own functions (parse, fingerprint, typia, and for Create Model
 * `checkMetadata` and `packMetadata`), so the answers are the same. Errors come back as
 * {@link WireError}s, thrown by the HTTP thread at their own step (so the idempotency order holds).
 */
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";
import { isMainThread } from "node:worker_threads";
import { move, transferableSymbol, valueSymbol } from "piscina";
import type { CreateModelRequest, Metadata } from "../contract";
import { ApiError } from "../contract/errors";
import { packMetadata } from "../store/packedMetadata";
import type { BodyOutcome, BodyRoute, BodyTask, PreparedBody, PreparedInput, Validator, WireError } from "./context";
import { checkMetadata } from "./handlers/checkMetadata";
import { validateCreateModel, validateGenerate } from "./handlers/bodyValidators";
import { bodyFingerprint } from "./steps/idempotency";
import { parseJsonBytes } from "./steps/parseJson";
import { validateJsonBody } from "./steps/validate";

/** Scheduling niceness of a body worker thread: the HTTP thread (niceness 0) gets the CPU first. */
export const BODY_WORKER_NICENESS = 10;

/** Lowers this thread's priority (Linux: niceness is per thread); elsewhere does nothing. */
function lowerThreadPriority(): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, BODY_WORKER_NICENESS);
  } catch {
    // not Linux, or not allowed: the thread keeps the process's priority
  }
}

if (!isMainThread) lowerThreadPriority();

type Preparer = (json: unknown) => { body: unknown } & PreparedInput;

const PREPARERS: Record<BodyRoute, Preparer> = {
  "POST /v1/models": prepareCreateModel,
  "POST /v1/models/:model_id/generate": (json) => ({ body: validateJsonBody(validateGenerate as Validator<unknown>, json) }),
};

/** The routes {@link prepareBody} knows. */
export const BODY_ROUTES: ReadonlySet<string> = new Set(Object.keys(PREPARERS));

/** Parses and validates one body. @throws whatever is not an `ApiError` (answered 500). */
export function prepareBody(task: BodyTask): BodyOutcome {
  const bytes = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength);
  let json: unknown;
  try {
    json = parseJsonBytes(bytes);
  } catch (err) {
    return { ok: false, error: toWire(err) };
  }
  const fingerprint = task.fingerprintPrefix === undefined ? undefined : bodyFingerprint(task.fingerprintPrefix, json);
  let input: PreparedBody["input"];
  try {
    input = { ok: true, ...PREPARERS[task.route](json) };
  } catch (err) {
    input = { ok: false, error: toWire(err) };
  }
  return fingerprint === undefined ? { ok: true, input } : { ok: true, fingerprint, input };
}

/** The piscina handler: {@link prepareBody}, with the encoded metadata transferred. */
export default function run(task: BodyTask): unknown {
  const out = prepareBody(task);
  const packed = out.ok && out.input.ok ? out.input.packedMetadata : undefined;
  if (packed === undefined) return out;
  return move({ [transferableSymbol]: [packed.buffer], [valueSymbol]: out } as unknown as Parameters<typeof move>[0]);
}

/** Create Model: typia, `checkMetadata`, then the metadata split into what the HTTP thread needs and the rest, encoded. */
function prepareCreateModel(json: unknown): { body: CreateModelRequest } & PreparedInput {
  const body = validateJsonBody(validateCreateModel as Validator<unknown>, json) as CreateModelRequest;
  try {
    checkMetadata(body.metadata);
  } catch (err) {
    return { body: { ...body, metadata: shapeOf(body.metadata) }, metadataError: toWire(err) };
  }
  return { body: { ...body, metadata: shapeOf(body.metadata) }, packedMetadata: packMetadata(body.metadata) };
}

/** The parts of a metadata the HTTP thread reads (admission control); the rest is packed. */
function shapeOf(md: Metadata): Metadata {
  const out: Metadata = { features: md.features, cardinalities: md.cardinalities, empirical_probs: md.empirical_probs };
  if (md.marginals !== undefined) out.marginals = md.marginals;
  return out;
}

function toWire(err: unknown): WireError {
  if (!(err instanceof ApiError)) throw err;
  return err.param === undefined ? { code: err.code, message: err.message } : { code: err.code, message: err.message, param: err.param };
}
