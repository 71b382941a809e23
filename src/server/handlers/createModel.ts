/**
 * Handler of Create Model, `POST /v1/models` (contract: "Create Model"): `checkMetadata`, the
 * monthly quota (402), admission control (`engine.admissionCheck`: 400 or 429), then model,
 * metadata and (under an Idempotency-Key) the response in one transaction (402 at the model cap),
 * and training is queued; 201. If the engine refuses it, model and response are deleted again.
 */
import { ModelLimitError, newModelId, PackedMetadata, type ModelRecord } from "../../store";
import { CONFIG_DEFAULTS, type CreateModelRequest, type Metadata, type ModelConfig, type ModelConfigInput, type ModelSize } from "../../contract";
import { ApiError, ClientAbortedError, fromWire } from "../errors";
import { assertQuotaLeft } from "../../usage/quota";
import type { HandlerCtx, Reply } from "../context";
import { checkMetadata } from "./checkMetadata";
import { toResponse } from "../steps/handle";
import { toPublicModel } from "./models";

const SIZE_ALIASES: Record<string, ModelSize> = { S: "small", M: "medium", L: "large" };

/**
 * The `config.device` of a new model: `cpu`, or the engine's GPU if any (`auto`, `gpu`).
 * @throws ApiError 400 `parameter_invalid` (`body.config.device`) for `gpu` without a GPU.
 */
export function deviceFor(preference: ModelConfigInput["device"], gpu: string | undefined): string {
  if (preference === "cpu") return "cpu";
  if (gpu !== undefined) return gpu;
  if (preference === "gpu") {
    throw new ApiError("parameter_invalid", 'config.device "gpu": this server has no usable GPU (no CUDA compute core or no device); use "auto" or "cpu".', "body.config.device");
  }
  return "cpu";
}

/** The effective config: `input` over {@link CONFIG_DEFAULTS}, aliases normalised, `device` set. */
export function effectiveConfig(input: ModelConfigInput | undefined, device: string): ModelConfig {
  const { device: _preference, model_size, ...rest } = input ?? {};
  const size = model_size === undefined ? CONFIG_DEFAULTS.model_size : (SIZE_ALIASES[model_size] ?? (model_size as ModelSize));
  return { ...CONFIG_DEFAULTS, ...rest, model_size: size, device };
}

/** 402 `quota_exceeded` for an org at its model cap (only deleting frees it: not a 429). */
function modelLimitReached(err: ModelLimitError): ApiError {
  return new ApiError(
    "quota_exceeded",
    `Organization ${err.org} already keeps ${err.limit} models (sandbox and live together), the most this server allows ` +
      "(synthd serve --max-models-per-org). Delete models it no longer needs (DELETE /v1/models/{model_id}) to create more.",
  );
}

/** `POST /v1/models`: 201 with the new Model (status `training`). */
export async function createModel(ctx: HandlerCtx<CreateModelRequest, unknown>): Promise<Reply> {
  const { store, engine } = ctx.services;
  const { metadata, config } = ctx.body;
  // A large body was checked on the body worker thread, and its metadata encoded there.
  const prepared = ctx.prepared;
  if (prepared?.metadataError !== undefined) throw fromWire(prepared.metadataError);
  if (prepared === undefined) checkMetadata(metadata);
  await assertQuotaLeft(store, ctx.auth, ctx.services.clock());
  const effective = effectiveConfig(config, deviceFor(config?.device, engine.gpu));
  engine.admissionCheck(effective, metadata, ctx.auth.org); // before anything is stored

  let id = newModelId();
  while ((await store.getModel(id)) !== undefined) id = newModelId();
  const now = new Date().toISOString();
  const rec: ModelRecord = {
    id,
    org: ctx.auth.org,
    env: ctx.auth.env,
    status: "training",
    config: effective,
    current_epoch: 0,
    train_loss: null,
    val_loss: null,
    created_at: now,
    updated_at: now,
    error: null,
  };
  const reply: Reply = { kind: "envelope", status: 201, object: "model", data: toPublicModel(rec) };
  const response = { ...toResponse(reply), request_id: ctx.requestId };
  // The client went away meanwhile: nothing will be answered, so no model is made.
  if (ctx.aborted()) throw new ClientAbortedError();
  let stored: Metadata | PackedMetadata = metadata;
  if (prepared !== undefined) {
    // `metadata` is then only its shape: the whole of it is in the encoded bytes.
    if (prepared.packedMetadata === undefined) throw new Error("a metadata checked off-thread came back without its encoding");
    stored = new PackedMetadata(prepared.packedMetadata);
  }
  try {
    await store.createModel(rec, stored, ctx.idempotency && { scope: ctx.idempotency, response }, { maxModelsPerOrg: ctx.services.maxModelsPerOrg });
  } catch (err) {
    if (err instanceof ModelLimitError) throw modelLimitReached(err);
    throw err;
  }
  try {
    await engine.train(id);
  } catch (err) {
    // Take back model and stored response together (a crash before this leaves both: consistent).
    await store.deleteModel(id, ctx.services.clock(), ctx.idempotency).catch((delErr: unknown) =>
      ctx.services.logger.error({ err: delErr, req_id: ctx.requestId, model_id: id }, "could not remove refused model"),
    );
    throw err;
  }
  return { kind: "stored", response };
}
