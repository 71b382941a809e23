/** Response envelopes, list queries, error types, codes and body (contract envelopes). */
import type { tags } from "typia";
import type { Metadata } from "./metadata";
import type { Model } from "./model";
import type { Generation } from "./generate";

/** Query of `GET /v1/models`. */
export interface ListModelsQuery {
  limit?: number & tags.Type<"uint32"> & tags.Minimum<1> & tags.Maximum<100>;
  /** A model id (`mdl_` + 12 lowercase hex); anything else names no model and is refused here. */
  starting_after?: string & tags.Pattern<"^mdl_[0-9a-f]{12}$">;
}

/** Success envelope (contract: "Response envelope"). */
export interface Envelope<T> {
  object: "model" | "list" | "generation" | "model_metadata";
  data: T;
  metadata: { timestamp: string; has_more?: boolean };
}

/** `metadata` of a success envelope. */
export interface ResponseMetadata {
  /** ISO 8601 UTC time of the response. */
  timestamp: string & tags.Format<"date-time">;
}

/** `metadata` of a list envelope. */
export interface ListResponseMetadata extends ResponseMetadata {
  /** True when a further page exists (pass the last item's id as `starting_after`). */
  has_more: boolean;
}

/** Response of Create Model (201) and Get Model (200): envelope object `model`. */
export interface ModelResponse {
  object: "model";
  data: Model;
  metadata: ResponseMetadata;
}

/** Response of List Models (200): envelope object `list`, newest first. */
export interface ModelListResponse {
  object: "list";
  data: Model[];
  metadata: ListResponseMetadata;
}

/** Response of Generate (200): envelope object `generation`. */
export interface GenerationResponse {
  object: "generation";
  data: Generation;
  metadata: ResponseMetadata;
}

/** Response of Get Model Metadata (200, extension): envelope object `model_metadata`. */
export interface ModelMetadataResponse {
  object: "model_metadata";
  data: Metadata;
  metadata: ResponseMetadata;
}

/** `error.type` values (contract: "Error types"). */
export type ErrorType =
  | "authentication_error"
  | "invalid_request_error"
  | "not_found_error"
  | "rate_limit_error"
  | "quota_exceeded_error"
  | "api_error";

/** `error.code` values: the contract's table plus `docs/decisions.md` "Extensions of the contract". */
export type ErrorCode =
  | "api_key_missing"
  | "api_key_invalid"
  | "parameter_invalid"
  | "model_not_found"
  | "model_not_ready"
  | "training_service_unavailable"
  | "idempotency_key_in_use"
  | "quota_exceeded"
  | "rate_limit_exceeded"
  | "internal_error"
  | "request_too_large"
  | "route_not_found"
  | "method_not_allowed";

/** HTTP status and type of every error code (contract: "Error codes", plus the extensions). */
export const ERROR_CODES: Record<ErrorCode, { status: number; type: ErrorType }> = {
  api_key_missing: { status: 401, type: "authentication_error" },
  api_key_invalid: { status: 401, type: "authentication_error" },
  parameter_invalid: { status: 400, type: "invalid_request_error" },
  model_not_found: { status: 404, type: "not_found_error" },
  model_not_ready: { status: 400, type: "invalid_request_error" },
  training_service_unavailable: { status: 503, type: "api_error" },
  idempotency_key_in_use: { status: 409, type: "invalid_request_error" },
  quota_exceeded: { status: 402, type: "quota_exceeded_error" },
  rate_limit_exceeded: { status: 429, type: "rate_limit_error" },
  internal_error: { status: 500, type: "api_error" },
  request_too_large: { status: 413, type: "invalid_request_error" },
  route_not_found: { status: 404, type: "invalid_request_error" },
  method_not_allowed: { status: 405, type: "invalid_request_error" },
};

/** Error envelope (contract: "Error envelope"). */
export interface ErrorBody {
  error: {
    type: ErrorType;
    code: ErrorCode;
    /** Human-readable description. */
    message: string;
    /** `{docs_url}/docs/errors#<code>`. */
    doc_url: string & tags.Format<"uri">;
    /** Offending parameter path, e.g. `body.config.batch_size`; present when applicable. */
    param?: string;
  };
  /** `req_` + 24 characters from `[A-Za-z0-9]`; equals the `X-Request-Id` header. */
  request_id: string & tags.Pattern<"^req_[A-Za-z0-9]{24}$">;
}
