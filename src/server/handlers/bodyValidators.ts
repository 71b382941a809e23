/**
 * The typia validators of the request bodies (generated at compile time from the contract types,
 * `typia.createValidateEquals<T>()`), in a module of their own so that the route table
 * (`routes.ts`) and the body worker (`../bodyWorker.ts`) share one copy of the generated code.
 */
import typia from "typia";
import type { CreateModelRequest, GenerateRequest } from "../../contract";
import type { Validator } from "../context";

/** Body of `POST /v1/models` (contract: "Create Model"). */
export const validateCreateModel: Validator<CreateModelRequest> = typia.createValidateEquals<CreateModelRequest>();

/** Body of `POST /v1/models/{model_id}/generate` (contract: "Generate"). */
export const validateGenerate: Validator<GenerateRequest> = typia.createValidateEquals<GenerateRequest>();
