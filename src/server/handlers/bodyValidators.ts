/** The typia body validators, in one module so the route table and body worker share the code. */
import typia from "typia";
import type { CreateModelRequest, GenerateRequest } from "../../contract";
import type { Validator } from "../context";

/** Body of `POST /v1/models` (contract: "Create Model"). */
export const validateCreateModel: Validator<CreateModelRequest> = typia.createValidateEquals<CreateModelRequest>();

/** Body of `POST /v1/models/{model_id}/generate` (contract: "Generate"). */
export const validateGenerate: Validator<GenerateRequest> = typia.createValidateEquals<GenerateRequest>();
