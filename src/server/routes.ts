/**
 * The route table (contract: "Endpoints"; DESIGN §3 extension `GET /v1/models/{id}/metadata`).
 *
 * Each route names its method, path pattern, the typia validators of its body and query
 * (generated at compile time from the contract types, so the handler's input type is the type the
 * validator checks), and its handler. Order matters only for `Allow` (methods listed in table order).
 */
import typia, { type IValidation } from "typia";
import type { CreateModelRequest, Envelope, GenerateRequest, ListModelsQuery } from "../types";
import type { IdempotencyScope } from "../store";
import type { Auth, Services } from "./context";
import { createModel } from "./handlers/createModel";
import { errorDocs } from "./handlers/errorDocs";
import { generate } from "./handlers/generate";
import { deleteModel, getModel, getModelMetadata, listModels } from "./handlers/models";
import { openApiJson } from "./openapi";

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
  /**
   * The request's Idempotency-Key scope when it executes under one: a handler whose side effect is
   * one store transaction stores its response there in that same transaction (Create Model).
   */
  idempotency?: IdempotencyScope;
  /**
   * True once the client's connection has closed (nothing can be answered). Handlers check it
   * right before their side effect (a charge, a new model) and throw `ClientAbortedError`.
   */
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

/** Route declaration; `B` and `Q` tie the validators to the handler's input types. */
export interface RouteSpec<B, Q> {
  method: RouteDef["method"];
  pattern: string;
  validateBody?: Validator<B>;
  validateQuery?: Validator<Q>;
  queryIntegers?: readonly (keyof Q & string)[];
  handler: (ctx: HandlerCtx<B, Q>) => Promise<Reply>;
}

/** Checks a route's types and erases them for the table. */
export function defineRoute<B = undefined, Q = Record<string, never>>(spec: RouteSpec<B, Q>): RouteDef {
  return {
    method: spec.method,
    pattern: spec.pattern,
    segments: spec.pattern.split("/"),
    auth: spec.pattern === "/v1" || spec.pattern.startsWith("/v1/"),
    validateBody: spec.validateBody,
    validateQuery: spec.validateQuery,
    queryIntegers: spec.queryIntegers,
    handler: spec.handler as RouteDef["handler"],
  };
}

/** Every route the server answers. */
export const ROUTES: readonly RouteDef[] = [
  defineRoute<CreateModelRequest>({
    method: "POST",
    pattern: "/v1/models",
    validateBody: typia.createValidateEquals<CreateModelRequest>(),
    handler: createModel,
  }),
  defineRoute<undefined, ListModelsQuery>({
    method: "GET",
    pattern: "/v1/models",
    validateQuery: typia.createValidateEquals<ListModelsQuery>(),
    queryIntegers: ["limit"],
    handler: listModels,
  }),
  defineRoute({ method: "GET", pattern: "/v1/models/:model_id", handler: getModel }),
  defineRoute({ method: "DELETE", pattern: "/v1/models/:model_id", handler: deleteModel }),
  defineRoute<GenerateRequest>({
    method: "POST",
    pattern: "/v1/models/:model_id/generate",
    validateBody: typia.createValidateEquals<GenerateRequest>(),
    handler: generate,
  }),
  defineRoute({ method: "GET", pattern: "/v1/models/:model_id/metadata", handler: getModelMetadata }),
  defineRoute({
    method: "GET",
    pattern: "/v1/openapi.json",
    handler: async () => ({ kind: "text", status: 200, contentType: "application/json", text: openApiJson() }),
  }),
  defineRoute({ method: "GET", pattern: "/docs/errors", handler: errorDocs }),
];
