/**
 * The request context and the step type of the HTTP pipeline. The uWS adapter (`app.ts`) creates
 * one {@link Ctx} per request from data copied out of uWS's stack-allocated `HttpRequest` before
 * any `await`; the steps (`pipeline.ts`) fill it in order and the last sets `ctx.response`.
 */
import type { Logger } from "pino";
import type { IValidation } from "typia";
import type { Auth } from "../usage/auth";
import type { Engine } from "../engine/engine";
import type { ChargeRequest, IdempotencyScope, Store } from "../store";
import type { Envelope, ErrorCode } from "../contract";
import type { ForwardedHeader, TrustedProxies } from "./clientAddress";
import type { RateLimiter } from "./limits/rateLimiter";

/** What every request can reach: the app's dependencies and options. */
export interface Services {
  store: Store;
  engine: Engine;
  logger: Logger;
  /** When true, `internal_error` messages include the underlying error's message. */
  debug: boolean;
  /** Base of `error.doc_url` (no trailing slash): `${docsUrl}/docs/errors#${code}`. */
  docsUrl: string;
  /** Largest accepted request body in bytes; larger gives 413 `request_too_large`. */
  maxBodyBytes: number;
  /** Current time in Unix milliseconds: rate windows, quota months, idempotency expiry. Injectable for tests. */
  clock: () => number;
  /** The sliding window counters: in memory (written through to the store) or in Redis (shared). */
  limiter: RateLimiter;
  /** Requests per minute of an org without its own `rate_limit`. */
  rateLimit: number;
  /** Models one org may keep (both environments); Create Model beyond it is 402 `quota_exceeded`. */
  maxModelsPerOrg: number;
  /** Failed authentications per minute per client address. */
  authFailureLimit: number;
  /** Proxies whose forwarding header names the client address (`--trusted-proxy`); empty: none. */
  trustedProxies: TrustedProxies;
  /** The forwarding header those proxies write (`--forwarded-header`). */
  forwardedHeader: ForwardedHeader;
  /** Ids of the requests this process is working on (their pending charges are not orphans). */
  live: Set<string>;
  /** Asks for `Store.reconcile` until it succeeds (a refund or key release failed to write). */
  reconcileSoon: () => void;
}

/** The authenticated caller (set by the `authenticate` step). Models are scoped by (org, env). */
export type { Auth };

/** The response being built. `body` undefined means no body (204). */
export interface PendingResponse {
  status: number;
  /** Response headers, exact names as written (`X-Request-Id`, `Retry-After`, ...). */
  headers: Record<string, string>;
  /** Text (JSON) or bytes (an Arrow Generate response). */
  body?: string | Uint8Array;
}

/** The per-request state passed along the pipeline. */
export interface Ctx {
  readonly services: Services;
  /** Upper-case HTTP method (`GET`, `POST`, ...). */
  readonly method: string;
  /** URL path without the query string, e.g. `/v1/models/mdl_0123456789ab`. */
  readonly path: string;
  /** Raw query string without `?` (may be empty). */
  readonly rawQuery: string;
  /** Request headers, lower-case names. Never log `authorization`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The TCP peer's address as uWS reports it (IPv6 fully expanded); see `clientAddress.ts`. */
  readonly remoteAddress: string;
  /** `performance.now()` when the request arrived (milliseconds). */
  readonly startedAt: number;
  /** The request body as it streams in (started synchronously by the adapter). */
  readonly bodySource: BodySource;
  /** Set by `onAborted`: the client went away; nothing may be written. */
  aborted: boolean;

  /** `req_` + 24 alphanumerics; set by the `requestId` step. */
  requestId: string;
  /** Set by `authenticate` for `/v1` paths. */
  auth?: Auth;
  /** Set by `route`: the matched route and its path parameters. */
  route?: { def: RouteDef; params: Record<string, string> };
  /** Set by `readBody`: the raw bytes (copied out of uWS's buffers). */
  rawBody?: Buffer;
  /** Set by `parseJson` on POST: the parsed JSON value (unset when the body was parsed off-thread). */
  json?: unknown;
  /** Set by `parseJson` instead of `json` for a large body parsed on a worker (`bodyPool.ts`). */
  prepared?: PreparedBody;
  /** Set by `validate`: the typed, validated input of the route. */
  input?: { body: unknown; query: unknown };
  /** Headers every response of this request carries (errors included), e.g. `X-Request-Id`. */
  responseHeaders: Record<string, string>;
  /** Set by the handler step or by the error boundary. */
  response?: PendingResponse;
  /** Set by `idempotency` when the request executes under an Idempotency-Key. */
  idempotency?: IdempotencyScope;
  /** Set by `idempotency` when the response is a replay: the `request_id` of the original request. */
  replayOf?: string;
  /** Set by `settle` for an un-keyed 2xx's charge: refunded if the response is not delivered. */
  deliveryCharge?: ChargeRequest;
  /** Set by the adapter: rows given back because the response was not delivered (logged). */
  refundedRows?: number;
}

/** An error found on another thread: the fields of an `ApiError` (src/contract/errors.ts). */
export interface WireError {
  code: ErrorCode;
  message: string;
  param?: string;
}

/** A body parsed off-thread, whose JSON was valid (see `Ctx.prepared`). */
export interface PreparedBody {
  /** The Idempotency-Key fingerprint (`steps/idempotency.ts`), computed when the request has a key. */
  fingerprint?: string;
  /** The validation of the body: what the `validate` step answers. */
  input: { ok: false; error: WireError } | ({ ok: true; body: unknown } & PreparedInput);
}

/**
 * What the body worker did beyond validating a body. Create Model: the metadata's large parts
 * (`value_mappings`, `column_stats`, `rules`, `source`) come only in `packedMetadata`.
 */
export interface PreparedInput {
  /** Create Model: the first error of `checkMetadata`, which the handler throws in its place. */
  metadataError?: WireError;
  /** Create Model: the whole metadata as msgpack (`PackedMetadata`), when it passed `checkMetadata`. */
  packedMetadata?: Uint8Array;
}

/** Outcome of reading a body. */
export type BodyResult =
  | { ok: true; bytes: Buffer }
  | { ok: false; reason: "too_large" | "aborted" };

/** A body being read; `complete` turns true once the whole body was consumed. */
export interface BodySource {
  readonly result: Promise<BodyResult>;
  /** False while (or when) unread body bytes remain on the connection. */
  readonly complete: boolean;
  /** Called from `onAborted`: settles `result` with `aborted` and any pending {@link drain}. */
  abort(): void;
  /**
   * Stops buffering and resolves once the body was consumed to its end, or the client aborted, or
   * over `DRAIN_FACTOR` x the limit arrived (`complete` stays false: close after the answer).
   * Never rejects.
   */
  drain(): Promise<void>;
}

/** What a handler sees: validated input, path parameters and the caller. */
export interface HandlerCtx<B, Q> {
  body: B;
  query: Q;
  /** Path parameters by name (`model_id`), undecoded. */
  params: Record<string, string>;
  /** The request's `Accept` header ("" when absent): Generate answers Arrow when it asks for it. */
  accept: string;
  /** The caller (always set on `/v1` routes). */
  auth: Auth;
  services: Services;
  requestId: string;
  /** The Idempotency-Key scope: a one-transaction handler stores its response in it. */
  idempotency?: IdempotencyScope;
  /** Set when the body was parsed off-thread (`Ctx.prepared`); see {@link PreparedInput}. */
  prepared?: PreparedInput;
  /** True once the client has gone; checked right before a side effect (`ClientAbortedError`). */
  aborted: () => boolean;
}

/** What a handler returns; the `handle` step wraps `envelope` replies in the success envelope. */
export type Reply =
  | {
      kind: "envelope";
      status: number;
      object: Envelope<unknown>["object"];
      data: unknown;
      /** Set on list responses (`metadata.has_more`). */
      has_more?: boolean;
      headers?: Record<string, string>;
    }
  | { kind: "empty"; status: 204; headers?: Record<string, string> }
  | { kind: "text"; status: number; contentType: string; text: string; headers?: Record<string, string> }
  /** A binary body (an Arrow Generate response). */
  | { kind: "binary"; status: number; contentType: string; bytes: Uint8Array; headers?: Record<string, string> }
  /** A response already rendered (and stored for replay) by the handler itself. */
  | { kind: "stored"; response: { status: number; headers: Record<string, string>; body?: string | Uint8Array } };

/** A typia validator: `(input) => IValidation<T>`. */
export type Validator<T> = (input: unknown) => IValidation<T>;

/** A route with its input types erased (see {@link defineRoute}). */
export interface RouteDef {
  method: "GET" | "POST" | "DELETE";
  /** e.g. `/v1/models/:model_id/generate`; also the route's name in logs. */
  pattern: string;
  /** `pattern` split on `/`. */
  segments: readonly string[];
  /** True for `/v1` routes: the handler needs `ctx.auth`. */
  auth: boolean;
  validateBody?: Validator<unknown>;
  validateQuery?: Validator<unknown>;
  /** Query parameters parsed as integers before validation. */
  queryIntegers?: readonly string[];
  handler: (ctx: HandlerCtx<unknown, unknown>) => Promise<Reply>;
}

/** Calls the rest of the chain. */
export type Next = () => Promise<void>;

/**
 * One pipeline step (Hono-style middleware): do work, then `await next()`, or throw an `ApiError`
 * to answer early. Steps must not `await` before `next()` unless they really wait for something.
 */
export type Step = (ctx: Ctx, next: Next) => Promise<void>;

/** Runs `steps` in order as one step (each step's `next` calls the following one). */
export function compose(steps: readonly Step[]): (ctx: Ctx) => Promise<void> {
  return (ctx) => {
    const run = (i: number): Promise<void> => {
      const step = steps[i];
      if (step === undefined) return Promise.resolve();
      let called = false;
      return step(ctx, () => {
        if (called) return Promise.reject(new Error(`pipeline step ${i} called next() twice`));
        called = true;
        return run(i + 1);
      });
    };
    return run(0);
  };
}

/** The routes whose bodies are parsed on a body worker thread (`bodyWorker.ts`). */
export type BodyRoute = "POST /v1/models" | "POST /v1/models/:model_id/generate";

/** One body to parse. */
export interface BodyTask {
  route: BodyRoute;
  /** The body as received (its buffer transferred to this thread). */
  bytes: Uint8Array;
  /** `METHOD path?query\n` of the request when it has an Idempotency-Key (see `bodyFingerprint`). */
  fingerprintPrefix?: string;
}

/** The result: the body's JSON error, or what the later steps need of the body. */
export type BodyOutcome = { ok: false; error: WireError } | ({ ok: true } & PreparedBody);
