/**
 * The SDK's one error hierarchy (contract: "Errors" and "Client-side errors"), after stripe-node's
 * `Error.ts`: every error the SDK throws is a {@link SynthdError}; an HTTP error response maps to a
 * subclass by `error.code`, then `error.type`, then status ({@link errorFromResponse}); each class
 * names its codes and status below. `APIConnectionError` extends `APIError` (as in openai-node) so
 * one `instanceof APIError` catches every failure the request sender retries; the client-side
 * errors (`DataError`, training timeout and failure) extend the base too, without a `status`.
 */
import type { ErrorType, Model, ModelError } from "../contract";

/** Fields common to every SDK error. */
export interface SynthdErrorFields {
  /** Machine-readable code: a contract `error.code` or a client-side code (`training_timeout`, ...). */
  code: string;
  /** Human-readable description (from the server when the error came from a response). */
  message: string;
  /** HTTP status of the response; absent for client-side errors. */
  status?: number;
  /** Contract error type (`invalid_request_error`, ...); absent for client-side errors. */
  type?: ErrorType | string;
  /** Offending parameter path, e.g. `body.config.batch_size`. */
  param?: string;
  /** `request_id` of the body, else the `X-Request-Id` header. */
  requestId?: string;
  /** `error.doc_url` from the body. */
  docUrl?: string;
  /** Response headers (lower-cased names), when the error came from a response. */
  headers?: Record<string, string>;
  /** The underlying error (network failure, parse failure). */
  cause?: unknown;
}

/** Base class of every error thrown by the SDK. `instanceof SynthdError` catches them all. */
export class SynthdError extends Error {
  readonly code: string;
  readonly status?: number;
  readonly type?: string;
  readonly param?: string;
  readonly requestId?: string;
  readonly docUrl?: string;
  readonly headers?: Record<string, string>;

  constructor(fields: SynthdErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.code = fields.code;
    this.status = fields.status;
    this.type = fields.type;
    this.param = fields.param;
    this.requestId = fields.requestId;
    this.docUrl = fields.docUrl;
    this.headers = fields.headers;
  }
}

/** 401: `api_key_missing` (no Authorization header) or `api_key_invalid` (unknown key). */
export class AuthenticationError extends SynthdError {}

/**
 * Malformed request: `parameter_invalid` (400, `param` names the field), and synthd's extensions
 * (docs/decisions.md "Extensions of the contract") `request_too_large` (413), `route_not_found`
 * (404), `method_not_allowed` (405).
 */
export class InvalidRequestError extends SynthdError {}

/** 404 `model_not_found`: the model does not exist or belongs to another organization. */
export class NotFoundError extends SynthdError {}

/** 400 `model_not_ready`: generation needs `training` or `ready`; the message names id and state. */
export class ModelNotReadyError extends SynthdError {}

/** 409 `idempotency_key_in_use`: a request with the same Idempotency-Key is still in progress. */
export class ConflictError extends SynthdError {}

/** 402 `quota_exceeded`: the organization used up its monthly row quota. */
export class QuotaExceededError extends SynthdError {}

/** 429 `rate_limit_exceeded`. `retryAfter` is the `Retry-After` header in seconds, when sent. */
export class RateLimitError extends SynthdError {
  readonly retryAfter?: number;
  constructor(fields: SynthdErrorFields & { retryAfter?: number }) {
    super(fields);
    this.retryAfter = fields.retryAfter;
  }
}

/**
 * Server-side failure (5xx, other statuses): `training_service_unavailable` (503), `internal_error`
 * (500), unknown codes, and bodies that are no JSON error envelope (code `invalid_response`).
 */
export class APIError extends SynthdError {}

/** No HTTP response was received (connection refused, reset, DNS). Code `connection_error`. */
export class APIConnectionError extends APIError {}

/** No response within the client's `timeoutMs`. Code `request_timeout`. */
export class APITimeoutError extends APIConnectionError {}

/**
 * Client-side `training_timeout`: `waitUntilReady` saw no terminal state within `timeoutSeconds`.
 * The model keeps training on the server; `model` is the last state polled.
 */
export class TrainingTimeoutError extends SynthdError {
  readonly model: Model;
  readonly timeoutSeconds: number;
  constructor(model: Model, timeoutSeconds: number) {
    super({
      code: "training_timeout",
      message: `Model ${model.id} did not finish training within ${timeoutSeconds} seconds (status ${model.status}, epoch ${model.current_epoch}).`,
    });
    this.model = model;
    this.timeoutSeconds = timeoutSeconds;
  }
}

/** Client-side `training_failed`: the model reached status `failed`; `modelError` is its `error`. */
export class TrainingFailedError extends SynthdError {
  readonly model: Model;
  readonly modelError: ModelError | null;
  constructor(model: Model) {
    const reason = model.error ? `${model.error.code}: ${model.error.message}` : "no reason given";
    super({ code: "training_failed", message: `Training of model ${model.id} failed (${reason}).` });
    this.model = model;
    this.modelError = model.error;
  }
}

/**
 * Client-side `data_invalid`: the input table cannot be turned into metadata (unreadable, empty
 * or malformed file, too few rows or columns, bad encoding, bad header). The message is one
 * sentence naming the file and, where known, the line, byte offset or column.
 */
export class DataError extends SynthdError {
  /** The file, when the input was a file. */
  readonly file?: string;
  /** 1-based line number of the problem, when known. */
  readonly line?: number;
  /** Column name involved, when known. */
  readonly column?: string;
  constructor(message: string, where: { file?: string; line?: number; column?: string; cause?: unknown } = {}) {
    super({ code: "data_invalid", message, cause: where.cause });
    this.file = where.file;
    this.line = where.line;
    this.column = where.column;
  }
}

type ErrorClass = new (fields: SynthdErrorFields & { retryAfter?: number }) => SynthdError;

const BY_CODE: Record<string, ErrorClass> = {
  api_key_missing: AuthenticationError,
  api_key_invalid: AuthenticationError,
  parameter_invalid: InvalidRequestError,
  request_too_large: InvalidRequestError,
  route_not_found: InvalidRequestError,
  method_not_allowed: InvalidRequestError,
  model_not_found: NotFoundError,
  model_not_ready: ModelNotReadyError,
  idempotency_key_in_use: ConflictError,
  quota_exceeded: QuotaExceededError,
  rate_limit_exceeded: RateLimitError,
  training_service_unavailable: APIError,
  internal_error: APIError,
};

const BY_TYPE: Record<string, ErrorClass> = {
  authentication_error: AuthenticationError,
  invalid_request_error: InvalidRequestError,
  not_found_error: NotFoundError,
  rate_limit_error: RateLimitError,
  quota_exceeded_error: QuotaExceededError,
  api_error: APIError,
};

function byStatus(status: number): ErrorClass {
  switch (status) {
    case 400:
    case 405:
    case 413:
      return InvalidRequestError;
    case 401:
      return AuthenticationError;
    case 402:
      return QuotaExceededError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 429:
      return RateLimitError;
    default:
      return APIError;
  }
}

/** Parses `Retry-After` (delta-seconds or an HTTP date) to seconds >= 0, or undefined. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === "") return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, (at - now) / 1000);
}

/** Normalises fetch `Headers` or a plain record into a record with lower-cased names. */
export function headersToRecord(headers: Headers | Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  if (typeof (headers as Headers).forEach === "function" && typeof (headers as Headers).get === "function") {
    (headers as Headers).forEach((value, key) => {
      out[key.toLowerCase()] = value;
    });
  } else {
    for (const [k, v] of Object.entries(headers as Record<string, string>)) out[k.toLowerCase()] = String(v);
  }
  return out;
}

/**
 * Maps an HTTP error response (status >= 400; `body` the parsed envelope `{error: {type, code,
 * message, doc_url, param?}, request_id}`, raw text, or undefined) to the subclass chosen by
 * `error.code`, else `error.type`, else status. `X-Request-Id` and `Retry-After` fill `requestId`
 * and `retryAfter`. Never throws.
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers?: Headers | Record<string, string>,
): SynthdError {
  const h = headersToRecord(headers);
  const envelope = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : undefined;
  const err =
    envelope && typeof envelope.error === "object" && envelope.error !== null
      ? (envelope.error as Record<string, unknown>)
      : undefined;
  const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const code = str(err?.code);
  const type = str(err?.type);
  const requestId = str(envelope?.request_id) ?? h["x-request-id"];
  const retryAfter = parseRetryAfter(h["retry-after"]);
  let message = str(err?.message);
  if (message === undefined) {
    const text = typeof body === "string" ? body.trim().replace(/\s+/g, " ").slice(0, 200) : "";
    message = `HTTP ${status} with ${text ? `a non-JSON body: ${text}` : "no error envelope"}`;
  }
  const cls = (code !== undefined ? BY_CODE[code] : undefined) ?? (type !== undefined ? BY_TYPE[type] : undefined) ?? byStatus(status);
  return new cls({
    code: code ?? "invalid_response",
    message,
    status,
    type,
    param: str(err?.param),
    requestId,
    docUrl: str(err?.doc_url),
    headers: h,
    retryAfter,
  });
}
