/**
 * Handler of Create Model, `POST /v1/models` (contract: "Create Model").
 *
 * After typia has checked the body's shape: the semantic checks of `checkMetadata`, then the
 * monthly quota (402 `quota_exceeded` once the caller's usage this month has reached its quota;
 * creating charges nothing, see `src/usage/quota.ts`), then the effective config (aliases `S`/`M`/`L`
 * normalised, defaults filled, `device` = the engine's device), then admission control
 * (`engine.admissionCheck`, src/engine/admission/estimate.ts: 400 `parameter_invalid` naming the field to
 * lower when the model's memory estimate exceeds the server's whole training budget; 429
 * `rate_limit_exceeded` with `Retry-After` when the model would have to wait and the org already
 * has the most waiting models the server allows, 1,000 by default), then the record (status
 * `training`, epoch 0, losses and error null) and metadata are stored in one transaction and
 * training is queued. 201, envelope `model`. That transaction refuses an org that already keeps
 * `--max-models-per-org` models (402 `quota_exceeded`, nothing stored).
 *
 * A body over 64 KiB had `checkMetadata` run on the body worker thread (`../bodyPool.ts`), which
 * also encoded the metadata for the store; the handler then throws that check's error at the same
 * place, and the HTTP thread only copies the encoded bytes into the store.
 *
 * Under an Idempotency-Key the response is stored in the same transaction as the model (an atomic
 * phase in Brandur Leach's sense): after a crash at any point a retry either replays it or, when
 * nothing was committed, creates the model once.
 *
 * If the engine cannot take the model (`EngineUnavailableError`, or any other failure to queue),
 * the record (and its stored response) is deleted again and the error answered (503
 * `training_service_unavailable` with `Retry-After`, or 500), so a refused create leaves nothing behind.
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
 * The compute device a new model trains on, as returned in `config.device`: `cpu` for `cpu`; the
 * engine's GPU name for `auto` (the default) when it has one, else `cpu`; the GPU's name for `gpu`.
 * @param preference `config.device` as given (`auto`, `cpu` or `gpu`; undefined = `auto`).
 * @param gpu {@link Engine.gpu}: the engine's GPU name, undefined without one.
 * @throws ApiError 400 `parameter_invalid` (param `body.config.device`) for `gpu` on an engine
 *   without one.
 */
export function deviceFor(preference: ModelConfigInput["device"], gpu: string | undefined): string {
  if (preference === "cpu") return "cpu";
  if (gpu !== undefined) return gpu;
  if (preference === "gpu") {
    throw new ApiError("parameter_invalid", 'config.device "gpu": this server has no usable GPU (no CUDA compute core or no device); use "auto" or "cpu".', "body.config.device");
  }
  return "cpu";
}

/**
 * The effective config of a new model: `input` over {@link CONFIG_DEFAULTS}, `model_size` aliases
 * normalised, `device` set to `device` (the input's `device` preference is not part of the
 * returned config: {@link deviceFor} decides).
 */
export function effectiveConfig(input: ModelConfigInput | undefined, device: string): ModelConfig {
  const { device: _preference, model_size, ...rest } = input ?? {};
  const size = model_size === undefined ? CONFIG_DEFAULTS.model_size : (SIZE_ALIASES[model_size] ?? (model_size as ModelSize));
  return { ...CONFIG_DEFAULTS, ...rest, model_size: size, device };
}

/**
 * 402 `quota_exceeded` (no param) for an org at its model cap: a quota of models kept, which only
 * deleting models frees, so a client must not retry it as it would a 429.
 */
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
  // One transaction: the model, and under an Idempotency-Key the response naming it. A crash
  // before it leaves nothing (a retry creates the model once); after it, a retry replays.
  const response = { ...toResponse(reply), request_id: ctx.requestId };
  // The client went away meanwhile (or uWS closed the connection over a pipelined request):
  // nothing will be answered, so no model is made.
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
    // Refused after all: take back the model and its stored response together (a crash before
    // this leaves both, and the model resumes at the next start: also consistent).
    await store.deleteModel(id, ctx.services.clock(), ctx.idempotency).catch((delErr: unknown) =>
      ctx.services.logger.error({ err: delErr, req_id: ctx.requestId, model_id: id }, "could not remove refused model"),
    );
    throw err;
  }
  return { kind: "stored", response };
}
