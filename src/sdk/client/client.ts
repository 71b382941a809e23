/**
 * The typed HTTP client (contract: "Endpoints", "Authentication", "Idempotency", "Limits"). As in
 * stripe-node, retry, backoff and idempotency live once, in {@link Synthd.request}; resource
 * objects (`client.models`) are thin. Retry policy:
 *  - retried: network failures and timeouts, 429, every 5xx, and 409 `idempotency_key_in_use`
 *    (the earlier attempt with the same key is still running; the same key returns its stored
 *    response once it finishes);
 *  - never retried: every other 4xx;
 *  - delay before retry k: `Retry-After` when given (up to `maxRetryAfterSeconds`, else thrown at
 *    once), else "full jitter" backoff, uniform in [0, min(8 s, 0.5 s * 2^(k-1))] (Brooker,
 *    "Exponential Backoff And Jitter", AWS Architecture Blog, 2015);
 *  - every POST carries one `Idempotency-Key` (caller's, else `crypto.randomUUID()`) on all its
 *    attempts, so a retried create or generate runs at most once.
 */
import { randomUUID } from "node:crypto";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  SynthdError,
  errorFromResponse,
  headersToRecord,
  parseRetryAfter,
} from "../errors";
import { Models } from "./models";
import type { APIResponse, RateLimitState, RequestSpec } from "./request";
import type { NodeResponse } from "./node-fetch";

/** Package version sent in the User-Agent. */
export const SDK_VERSION = "0.1.0";

/** Default server address when neither `baseUrl` nor `SYNTHD_URL` is set. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

/** Options of {@link Synthd}. */
export interface SynthdOptions {
  /** API key; default `process.env.SYNTHD_API_KEY` (none: the server answers `api_key_missing`). */
  apiKey?: string;
  /** Server address without `/v1`; default `process.env.SYNTHD_URL`, else `http://127.0.0.1:8080`. */
  baseUrl?: string;
  /** Retries after the first attempt (not counting it). Default 3. 0 disables retries. */
  maxRetries?: number;
  /** Per-attempt timeout in milliseconds. Default 60 000. */
  timeoutMs?: number;
  /** fetch implementation; default the global `fetch` (Node >= 18). */
  fetch?: typeof fetch;
  /** Backoff base in ms (delay cap of retry k is base * 2^(k-1)). Default 500. */
  backoffBaseMs?: number;
  /** Backoff cap in ms. Default 8 000. */
  backoffMaxMs?: number;
  /** Longest `Retry-After` (seconds) waited out; longer ones are thrown. Default 120. */
  maxRetryAfterSeconds?: number;
  /** Called before each retry sleep (logging, metrics, tests). */
  onRetry?: (info: RetryInfo) => void;
}

/** Describes a retry about to happen. */
export interface RetryInfo {
  method: string;
  path: string;
  /** 1 for the first retry. */
  attempt: number;
  /** Milliseconds the client sleeps before the retry. */
  delayMs: number;
  /** Why: the typed error of the failed attempt. */
  error: SynthdError;
  /** The Idempotency-Key reused by the retry (POST only). */
  idempotencyKey?: string;
}

export type { APIResponse, RateLimitState, RequestOptions, RequestSpec } from "./request";


/** True for retryable failures: transport errors, 429, 5xx, 409 idempotency_key_in_use. */
export function isRetryable(err: SynthdError): boolean {
  if (err instanceof APIConnectionError) return true;
  const s = err.status;
  if (s === undefined) return false;
  return s === 429 || s >= 500 || (s === 409 && err.code === "idempotency_key_in_use");
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The synthd client: `new Synthd({ apiKey }).models.create({ metadata })`. */
export class Synthd {
  readonly apiKey?: string;
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  /** `/v1/models` and its sub-resources. */
  readonly models: Models;
  /** Rate-limit headers of the latest response, if any carried them. */
  lastRateLimit?: RateLimitState;

  private readonly fetchImpl: typeof fetch;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly maxRetryAfterSeconds: number;
  private readonly onRetry?: (info: RetryInfo) => void;

  constructor(opts: SynthdOptions = {}) {
    this.apiKey = opts.apiKey ?? (process.env.SYNTHD_API_KEY || undefined);
    this.baseUrl = (opts.baseUrl ?? (process.env.SYNTHD_URL || DEFAULT_BASE_URL)).replace(/\/+$/, "");
    this.maxRetries = opts.maxRetries ?? 3;
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.fetchImpl = opts.fetch ?? globalThis.fetch;
    this.backoffBaseMs = opts.backoffBaseMs ?? 500;
    this.backoffMaxMs = opts.backoffMaxMs ?? 8_000;
    this.maxRetryAfterSeconds = opts.maxRetryAfterSeconds ?? 120;
    this.onRetry = opts.onRetry;
    if (!Number.isInteger(this.maxRetries) || this.maxRetries < 0) throw new RangeError("maxRetries must be a non-negative integer");
    if (typeof this.fetchImpl !== "function") throw new TypeError("no fetch implementation: pass `fetch` or use Node >= 18");
    this.models = new Models(this);
  }

  /**
   * Sends one API call with retries (policy in the file header).
   * @returns the parsed success body and headers.
   * @throws a {@link SynthdError} subclass from {@link errorFromResponse} for error responses,
   *         {@link APIConnectionError} / {@link APITimeoutError} when no response came, or the
   *         abort reason when `signal` fires.
   */
  async request<T>(spec: RequestSpec): Promise<APIResponse<T>> {
    const url = new URL(this.baseUrl + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      Accept: spec.accept ?? "application/json",
      "User-Agent": `synthd-node/${SDK_VERSION} node/${process.versions.node}`,
    };
    if (this.apiKey) headers.Authorization = `Bearer ${this.apiKey}`;
    let payload: string | undefined;
    if (spec.method === "POST") {
      headers["Content-Type"] = "application/json";
      headers["Idempotency-Key"] = spec.idempotencyKey ?? randomUUID();
      payload = JSON.stringify(spec.body ?? {});
    }
    const maxRetries = spec.maxRetries ?? this.maxRetries;
    const timeoutMs = spec.timeoutMs ?? this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      let error: SynthdError;
      try {
        return await this.attempt<T>(spec, url, headers, payload, timeoutMs);
      } catch (e) {
        if (!(e instanceof SynthdError)) throw e;
        error = e;
      }
      if (attempt >= maxRetries || !isRetryable(error)) throw error;
      const retryAfter = parseRetryAfter(error.headers?.["retry-after"]);
      let delayMs: number;
      if (retryAfter !== undefined) {
        if (retryAfter > this.maxRetryAfterSeconds) throw error;
        delayMs = Math.round(retryAfter * 1000);
      } else {
        delayMs = Math.round(Math.random() * Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** attempt));
      }
      this.onRetry?.({
        method: spec.method,
        path: spec.path,
        attempt: attempt + 1,
        delayMs,
        error,
        idempotencyKey: headers["Idempotency-Key"],
      });
      await sleep(delayMs, spec.signal);
    }
  }

  private async attempt<T>(
    spec: RequestSpec,
    url: URL,
    headers: Record<string, string>,
    payload: string | undefined,
    timeoutMs: number,
  ): Promise<APIResponse<T>> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = spec.signal ? AbortSignal.any([spec.signal, timeout]) : timeout;
    let res: Response;
    let raw: Uint8Array;
    try {
      res = await this.fetchImpl(url, { method: spec.method, headers, body: payload, signal });
      const into = spec.bodyInto;
      const bytes = (res as Partial<Pick<NodeResponse, "bytes">>).bytes;
      raw = into !== undefined && typeof bytes === "function" ? await bytes.call(res, into) : new Uint8Array(await res.arrayBuffer());
    } catch (e) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      if (timeout.aborted) {
        throw new APITimeoutError({
          code: "request_timeout",
          message: `${spec.method} ${spec.path} got no response within ${timeoutMs} ms.`,
          cause: e,
        });
      }
      const reason = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
      throw new APIConnectionError({
        code: "connection_error",
        message: `Could not reach the synthd server at ${this.baseUrl} (${reason}).`,
        cause: e,
      });
    }
    const h = headersToRecord(res.headers);
    this.noteRateLimit(h);
    const contentType = (h["content-type"] ?? "").split(";")[0].trim().toLowerCase();
    if (res.status >= 200 && res.status < 300 && spec.binaryType !== undefined && contentType === spec.binaryType) {
      return { status: res.status, body: raw as T, headers: h, requestId: h["x-request-id"] };
    }
    const text = new TextDecoder().decode(raw);
    let body: unknown = undefined;
    let parsed = true;
    if (text.length > 0) {
      try {
        body = JSON.parse(text);
      } catch {
        parsed = false;
        body = text;
      }
    }
    if (res.status >= 200 && res.status < 300) {
      if (!parsed) {
        throw new APIError({
          code: "invalid_response",
          message: `${spec.method} ${spec.path} answered HTTP ${res.status} with a body that is not JSON.`,
          status: res.status,
          requestId: h["x-request-id"],
          headers: h,
        });
      }
      const requestId = h["x-request-id"];
      return { status: res.status, body: body as T, headers: h, requestId };
    }
    throw errorFromResponse(res.status, body, h);
  }

  private noteRateLimit(h: Record<string, string>): void {
    const limit = Number(h["x-ratelimit-limit"]);
    const remaining = Number(h["x-ratelimit-remaining"]);
    const reset = Number(h["x-ratelimit-reset"]);
    if (h["x-ratelimit-limit"] !== undefined && Number.isFinite(limit) && Number.isFinite(remaining)) {
      this.lastRateLimit = { limit, remaining, reset: Number.isFinite(reset) ? reset : 0 };
    }
  }
}
