/**
 * The route table (contract: "Endpoints"): method, pattern, typia validators of body and query
 * (typed to the handler's input) and handler. Order matters only for `Allow`.
 */
import typia from "typia";
import type { CreateModelRequest, GenerateRequest, ListModelsQuery } from "../../contract";
import type { HandlerCtx, Reply, RouteDef, Validator } from "../context";
import { validateCreateModel, validateGenerate } from "./bodyValidators";
import { createModel } from "./createModel";
import { errorDocs } from "./errorDocs";
import { generate } from "./generate";
import { deleteModel, getModel, getModelMetadata, listModels } from "./models";
import { openApiJson } from "../openapi";

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
    validateBody: validateCreateModel,
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
    validateBody: validateGenerate,
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
