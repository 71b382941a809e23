/**
 * What a resource object (`./models`) needs of the client: the request shapes and one method
 * that sends a request with the client's retries, backoff and idempotency ({@link Synthd.request}
 * in `./client`). Its own module so the resources do not import the client that holds them.
 */

/** Per-call options accepted by every resource method. */
export interface RequestOptions {
  /** Idempotency-Key for a POST (default: a fresh UUID per call, reused across its retries). */
  idempotencyKey?: string;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
  /** Overrides the client's `timeoutMs` for this call (per attempt). */
  timeoutMs?: number;
  /** Aborts the call (including retry sleeps). */
  signal?: AbortSignal;
}

/** A request as seen by the sender. */
export interface RequestSpec extends RequestOptions {
  method: "GET" | "POST" | "DELETE";
  /** Path under the base URL, starting with `/v1/`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** The Accept header to send (default `application/json`). */
  accept?: string;
  /**
   * A media type whose 2xx bodies are returned as bytes (a Uint8Array) instead of parsed JSON
   * (`application/vnd.apache.arrow.stream` for Generate); any other 2xx body must be JSON.
   */
  binaryType?: string;
  /**
   * Memory to read a body of known length into (`size` bytes, contents to be overwritten), when
   * the fetch implementation can (`nodeFetch`'s `bytes`); otherwise the body is read as usual.
   */
  bodyInto?: (size: number) => Uint8Array;
}

/** A success: parsed JSON body (undefined for 204) or bytes (`binaryType`), lower-cased headers. */
export interface APIResponse<T> {
  status: number;
  body: T;
  headers: Record<string, string>;
  requestId?: string;
}

/** The last `X-RateLimit-*` headers seen by the client. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the window resets. */
  reset: number;
}

/**
 * What a resource calls on the client: `Synthd.request` (retries, backoff, idempotency) and the
 * last rate-limit headers seen (`Models.waitUntilReady` spreads its polls over the window).
 */
export interface Requester {
  request<T>(spec: RequestSpec): Promise<APIResponse<T>>;
  readonly lastRateLimit?: RateLimitState;
}
