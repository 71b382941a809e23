/**
 * The OpenAPI 3.1 description of the API, served at `GET /v1/openapi.json`.
 *
 * Its schemas are generated at compile time by typia (`typia.json.schemas<[...], "3.1">()`) from the
 * very types in `src/contract/index.ts` whose validators check the requests (`handlers/routes.ts`) and that the
 * handlers build the responses from, so the document cannot drift from the code. Only the paths,
 * parameters, headers and response codes are written here, referring to those components.
 */
import typia from "typia";
import {
  ERROR_CODES,
  MAX_SEED_ROWS_PER_REQUEST,
  type CreateModelRequest,
  type ErrorBody,
  type ErrorCode,
  type GenerateRequest,
  type GenerationResponse,
  type ListModelsQuery,
  type ModelListResponse,
  type ModelMetadataResponse,
  type ModelResponse,
} from "../contract";
import { ERROR_DESCRIPTIONS } from "./handlers/errorDocs";
import { DEFAULT_RATE_LIMIT } from "./limits/rateLimiter";
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "./steps/idempotency";

/** The typia-generated JSON schemas (OpenAPI 3.1 dialect) of the request and response types. */
export const SCHEMAS = typia.json.schemas<
  [
    CreateModelRequest,
    GenerateRequest,
    ListModelsQuery,
    ModelResponse,
    ModelListResponse,
    GenerationResponse,
    ModelMetadataResponse,
    ErrorBody,
  ],
  "3.1"
>();

type Json = Record<string, unknown>;

/**
 * Marks every object schema with `properties` and no `additionalProperties` as closed
 * (`additionalProperties: false`), in place: the server's validators are typia's `validateEquals`,
 * which reject unknown fields, and the responses carry exactly their type's fields.
 */
function closeObjects(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) closeObjects(n);
    return;
  }
  if (node === null || typeof node !== "object") return;
  const o = node as Json;
  if (o.type === "object" && o.properties !== undefined && !("additionalProperties" in o)) o.additionalProperties = false;
  for (const v of Object.values(o)) closeObjects(v);
}
closeObjects(SCHEMAS.components.schemas);

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** Headers on every `/v1` response (contract: "Endpoints", common response headers). */
const COMMON_HEADERS: Json = {
  "X-Request-Id": headerRef("X-Request-Id"),
  "X-RateLimit-Limit": headerRef("X-RateLimit-Limit"),
  "X-RateLimit-Remaining": headerRef("X-RateLimit-Remaining"),
  "X-RateLimit-Reset": headerRef("X-RateLimit-Reset"),
};

/**
 * Adds the Arrow form of a Generate response (docs/api.md "Arrow responses") to a JSON response
 * object: an Apache Arrow IPC stream, one Int32 column of codes per feature, chosen by Accept.
 */
function withArrow(response: Json): Json {
  const r = response as { content: Record<string, unknown> };
  r.content["application/vnd.apache.arrow.stream"] = {
    schema: { type: "string", format: "binary" },
    description:
      "Sent when Accept prefers it: an Arrow IPC stream with one record batch, one Int32 column per feature (named by the " +
      "feature, in the model's order) holding the codes, and schema metadata synthd.object = generation, synthd.model_id, " +
      "synthd.num_rows, synthd.timestamp.",
  };
  return response;
}

function json(schema: Json, description: string, extraHeaders: Json = {}): Json {
  return { description, headers: { ...COMMON_HEADERS, ...extraHeaders }, content: { "application/json": { schema } } };
}

/** The error response of `codes` that share one status. */
function errors(codes: ErrorCode[]): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const s = ERROR_CODES[c].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  const out: Json = {};
  for (const [status, cs] of byStatus) {
    const extra: Json = {};
    if (status === 429 || status === 503) extra["Retry-After"] = headerRef("Retry-After");
    if (status === 405) extra.Allow = { description: "Methods the path accepts (RFC 9110 §10.2.1).", schema: { type: "string" } };
    out[String(status)] = json(ref("ErrorBody"), cs.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c]}`).join("\n\n"), extra);
  }
  return out;
}

/** Errors any authenticated request can get. */
const ALWAYS: ErrorCode[] = ["api_key_missing", "api_key_invalid", "rate_limit_exceeded", "internal_error"];
const POST_ERRORS: ErrorCode[] = [...ALWAYS, "parameter_invalid", "idempotency_key_in_use", "request_too_large"];

const MODEL_ID_PARAM: Json = {
  name: "model_id",
  in: "path",
  required: true,
  description: "Model identifier, `mdl_` + 12 lowercase hex; any other string is simply not found (404).",
  schema: { type: "string" },
};

const IDEMPOTENCY_KEY_PARAM: Json = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Recommended on POST. Unique key for safe retries, scoped to the organization and environment, kept 24 hours: " +
    "a repeat returns the stored response with `Idempotent-Replayed: true`; while the first is running, 409 " +
    "`idempotency_key_in_use`; reused with a different request, 400 `parameter_invalid`.",
  schema: { type: "string", minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
};

const REPLAYED_HEADER: Json = {
  "Idempotent-Replayed": {
    description: "`true` when this response is the stored response of an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  },
};

let cached: string | undefined;

/** The document as JSON text (built once). */
export function openApiJson(): string {
  cached ??= JSON.stringify(openApiDocument());
  return cached;
}

/** Builds the document. Paths are relative to the server that serves it (`servers: [{url: "/"}]`). */
export function openApiDocument(): Json {
  const listQuery = (name: keyof ListModelsQuery): Json => ({
    $ref: `#/components/schemas/ListModelsQuery/properties/${name}`,
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "synthd API",
      version: "1",
      description:
        "Self-hosted synthetic tabular data: register a model from column statistics, poll it while it trains, " +
        "generate synthetic rows. Contract: shared/spec/service-interface.md; decisions: docs/api.md.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    paths: {
      "/v1/models": {
        post: {
          operationId: "createModel",
          summary: "Create Model",
          description: "Registers a model and starts training it. 402 once the month's row quota is used up.",
          parameters: [IDEMPOTENCY_KEY_PARAM],
          requestBody: { required: true, content: { "application/json": { schema: ref("CreateModelRequest") } } },
          responses: {
            "201": json(ref("ModelResponse"), "The new model, in status `training`.", REPLAYED_HEADER),
            ...errors([...POST_ERRORS, "quota_exceeded", "training_service_unavailable"]),
          },
        },
        get: {
          operationId: "listModels",
          summary: "List Models",
          description: "The caller's models, newest first (ties by id); `metadata.has_more` tells whether a further page exists.",
          parameters: [
            { name: "limit", in: "query", required: false, description: "Page size, 1 to 100 (default 20).", schema: listQuery("limit") },
            {
              name: "starting_after",
              in: "query",
              required: false,
              description: "Cursor: the id of the last model of the previous page.",
              schema: listQuery("starting_after"),
            },
          ],
          responses: {
            "200": json(ref("ModelListResponse"), "A page of models."),
            ...errors([...ALWAYS, "parameter_invalid"]),
          },
        },
      },
      "/v1/models/{model_id}": {
        parameters: [MODEL_ID_PARAM],
        get: {
          operationId: "getModel",
          summary: "Get Model",
          responses: {
            "200": json(ref("ModelResponse"), "The model with its current status, epoch and losses."),
            ...errors([...ALWAYS, "model_not_found"]),
          },
        },
        delete: {
          operationId: "deleteModel",
          summary: "Delete Model",
          description: "Stops training, frees the weights and removes the model, its metadata and checkpoints.",
          responses: {
            "204": { description: "Deleted; empty body.", headers: COMMON_HEADERS },
            ...errors([...ALWAYS, "model_not_found", "training_service_unavailable"]),
          },
        },
      },
      "/v1/models/{model_id}/generate": {
        parameters: [MODEL_ID_PARAM],
        post: {
          operationId: "generate",
          summary: "Generate Synthetic Data",
          description:
            "Generates rows (codes per feature) from a model in `training` or `ready`. The rows are charged to the " +
            "monthly quota before generating and refunded if generation fails. Seeded generation (extension): " +
            "`embedding: {num_rows, seed?, condition: {<feature>: code | [codes] | {codes, weights}}}` returns rows that all " +
            "satisfy the condition (`weights[i]` in (0, 1]: the share of code `codes[i]`'s values inside a range that covers " +
            "its bin in part); `embedding: {seed?, seed_data: {features, rows}}` returns one row per seed row, each cell a code, " +
            `a list of allowed codes, {codes, weights} or null (generated), at most ${MAX_SEED_ROWS_PER_REQUEST} seed rows per request. ` +
            "Rows are drawn from the model's conditional (importance sampling over latents, never rejection); unknown " +
            "features, codes outside [0, K), empty lists, ragged rows and conditions of probability 0 are " +
            "`parameter_invalid` naming the cell (`body.embedding.condition.age`, `body.embedding.seed_data.rows[3][1]`), " +
            "and charge nothing.",
          parameters: [IDEMPOTENCY_KEY_PARAM],
          requestBody: { required: true, content: { "application/json": { schema: ref("GenerateRequest") } } },
          responses: {
            "200": withArrow(json(ref("GenerationResponse"), "The generated codes.", { ...REPLAYED_HEADER, Vary: { schema: { type: "string" }, description: "Accept." } })),
            ...errors([...POST_ERRORS, "model_not_found", "model_not_ready", "quota_exceeded", "training_service_unavailable"]),
          },
        },
      },
      "/v1/models/{model_id}/metadata": {
        parameters: [MODEL_ID_PARAM],
        get: {
          operationId: "getModelMetadata",
          summary: "Get Model Metadata (extension)",
          responses: {
            "200": json(ref("ModelMetadataResponse"), "The metadata sent at creation."),
            ...errors([...ALWAYS, "model_not_found"]),
          },
        },
      },
      "/v1/openapi.json": {
        get: {
          operationId: "getOpenApi",
          summary: "This document",
          responses: {
            "200": { description: "The OpenAPI 3.1 document.", headers: COMMON_HEADERS, content: { "application/json": { schema: { type: "object" } } } },
            ...errors(ALWAYS),
          },
        },
      },
      "/docs/errors": {
        get: {
          operationId: "errorDocs",
          summary: "Error code reference (HTML); the target of `error.doc_url`",
          security: [],
          responses: { "200": { description: "HTML page with one anchor per error code.", content: { "text/html": { schema: { type: "string" } } } } },
        },
      },
    },
    components: {
      schemas: SCHEMAS.components.schemas ?? {},
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "`Authorization: Bearer <API_KEY>`; `svc_test_` keys are sandbox, `svc_live_` keys production.",
        },
      },
      headers: {
        "X-Request-Id": {
          description: "Unique request identifier, equal to `request_id` in error bodies.",
          schema: { type: "string", pattern: "^req_[A-Za-z0-9]{24}$" },
        },
        "X-RateLimit-Limit": {
          description: `Requests per minute allowed to the organization (default ${DEFAULT_RATE_LIMIT}); on a 401, the per-address budget of failed authentications.`,
          schema: { type: "integer", minimum: 1 },
        },
        "X-RateLimit-Remaining": {
          description: "Requests that would be admitted right now (sliding window counter).",
          schema: { type: "integer", minimum: 0 },
        },
        "X-RateLimit-Reset": {
          description:
            "Unix epoch seconds: the end of the current 60 s window or, if later, the moment a request will next be admitted.",
          schema: { type: "integer", minimum: 0 },
        },
        "Retry-After": {
          description: "Whole seconds to wait before retrying (429 and 503 only).",
          schema: { type: "integer", minimum: 1 },
        },
      },
    },
  };
}
