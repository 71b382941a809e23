/**
 * API errors and the error envelope (contract: "Errors"). Handlers and steps throw; the error
 * boundary (`steps/errorBoundary.ts`) maps it here, once, to the envelope and `ERROR_CODES` status.
 */
import { ApiError, ParamError } from "../contract/errors";
import { EngineModelError, EngineUnavailableError, OrgQueueFullError } from "../engine/engine";
import { ERROR_CODES, type ErrorBody } from "../contract";
import type { Ctx, WireError } from "./context";

export { ApiError };

/** 400 `parameter_invalid` naming `param`. */
export function paramInvalid(param: string, message: string): ApiError {
  return new ApiError("parameter_invalid", message, param);
}

/** Seconds a client is asked to wait after the store could not be written ({@link storageUnavailable}). */
export const STORAGE_RETRY_AFTER_S = 30;

/**
 * 503 `training_service_unavailable` with `Retry-After` for a request whose effects could not be
 * written (full disk; the server's condition, retryable): `what` failed, nothing kept or charged.
 */
export function storageUnavailable(what: string): ApiError {
  return new ApiError(
    "training_service_unavailable",
    `${what}: the server's storage is full or failing. Nothing was changed or charged; retry after ${STORAGE_RETRY_AFTER_S} seconds.`,
    undefined,
    { "Retry-After": String(STORAGE_RETRY_AFTER_S) },
  );
}

/** True for a failure to write the store: `STORE_WRITE_FAILED`, or a raw `ENOSPC`/`EDQUOT`. */
export function isStoreWriteFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as Error & { code?: unknown }).code;
  return code === "STORE_WRITE_FAILED" || code === "ENOSPC" || code === "EDQUOT";
}

/** 404 `model_not_found` for `id` (also used for ids of another org or environment, rule 5). */
export function modelNotFound(id: string): ApiError {
  return new ApiError("model_not_found", `No such model: ${JSON.stringify(truncate(id, 64))}.`);
}

/**
 * Maps anything thrown to an {@link ApiError}: engine unavailable 503 and org queue full 429
 * (with `Retry-After`); `ParamError` 400; store failures 503 ({@link storageUnavailable});
 * `EngineModelError` 404 or 400 `model_not_ready`; else 500, generic unless `debug`.
 */
export function toApiError(err: unknown, debug: boolean): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof EngineUnavailableError) {
    const secs = retrySeconds(err.retryAfterSeconds);
    return new ApiError(
      "training_service_unavailable",
      `${err.publicReason ?? "The training service is temporarily unavailable"}; retry after ${secs} seconds.`,
      undefined,
      { "Retry-After": String(secs) },
    );
  }
  if (err instanceof OrgQueueFullError) {
    const secs = retrySeconds(err.retryAfterSeconds);
    return new ApiError("rate_limit_exceeded", `${err.message} Retry after ${secs} second${secs === 1 ? "" : "s"}.`, undefined, {
      "Retry-After": String(secs),
    });
  }
  if (err instanceof ParamError) return paramInvalid(err.param, err.message);
  if (isStoreWriteFailure(err)) return storageUnavailable("The request could not be written to the store");
  if ((err as { code?: unknown } | null)?.code === "STORE_UNAVAILABLE") return storageUnavailable("The store cannot be reached");
  if (err instanceof EngineModelError) {
    if (err.code === "model_not_found") return new ApiError("model_not_found", `${err.message}.`.replace(/\.\.$/, "."));
    const state = err.status === undefined ? "" : `; generation needs state 'training' or 'ready'`;
    return new ApiError("model_not_ready", `${err.message}${state}.`.replace(/\.\.$/, "."));
  }
  const detail = debug && err instanceof Error ? `: ${err.message}` : ".";
  return new ApiError("internal_error", `An unexpected error occurred on the server${detail}`);
}

/** True when `err` maps to a 5xx `internal_error` (i.e. it is a bug or an unexpected failure). */
export function isUnexpected(err: unknown): boolean {
  return !(
    err instanceof ApiError ||
    err instanceof EngineUnavailableError ||
    err instanceof OrgQueueFullError ||
    err instanceof ParamError ||
    err instanceof EngineModelError ||
    isStoreWriteFailure(err)
  );
}

/** The error envelope for `err` (contract: "Error envelope"). `param` appears only when set. */
export function errorBody(err: ApiError, requestId: string, docsUrl: string): ErrorBody {
  const { type } = ERROR_CODES[err.code];
  const error: ErrorBody["error"] = {
    type,
    code: err.code,
    message: err.message,
    doc_url: `${docsUrl}/docs/errors#${err.code}`,
  };
  if (err.param !== undefined) error.param = err.param;
  return { error, request_id: requestId };
}

/** Sets `ctx.response` to the error envelope of `err` (mapped with {@link toApiError}). */
export function setErrorResponse(ctx: Ctx, err: unknown): ApiError {
  const api = toApiError(err, ctx.services.debug);
  ctx.response = {
    status: api.status,
    headers: { "Content-Type": "application/json", ...api.headers },
    body: JSON.stringify(errorBody(api, ctx.requestId, ctx.services.docsUrl)),
  };
  return api;
}

function retrySeconds(s: number): number {
  return Number.isFinite(s) ? Math.max(1, Math.ceil(s)) : 5;
}

/** `s` cut to `n` characters (ids echoed in messages are client input). */
export function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n)}...`;
}

/** The client closed the connection before its body arrived; nothing will be written. */
export class ClientAbortedError extends Error {
  constructor() {
    super("client aborted the request");
    this.name = "ClientAbortedError";
  }
}

/** The ApiError a body worker thread found (`bodyWorker.ts`), rebuilt from its plain fields. */
export function fromWire(e: WireError): ApiError {
  return new ApiError(e.code, e.message, e.param);
}
