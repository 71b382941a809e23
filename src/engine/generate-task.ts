/**
 * A Generate request as a worker task, and the worker's reply as a result: the part of
 * generation that runs on the calling thread. The request is checked once against the model's
 * record (and, for a seeded request, its metadata) by whoever read them — the Generate handler,
 * before it charges the rows, or {@link readAndCheck} for a caller that holds only the id — and
 * the worker takes the checked input as it is. Given latents are flattened and transferred;
 * seeded requests (`embedding.condition` / `embedding.seed_data`) are put in the model's feature
 * order (`model/seeded-input.ts`), and the worker draws them from the model's conditional
 * (`worker/seeded-draw.ts`). The codes come back as one transferred Int32Array, viewed per feature.
 */
import type { GenerateRequest, Metadata } from "../contract";
import type { ModelRecord, Store } from "../store";
import { InputError, isSeeded, latentSource, seededSource, SeededInputError } from "../model";
import type { CheckedGeneration, GenerateModel, GenerateReply, GenerateTask } from "./protocol";
import { ParamError } from "../contract/errors";
import { EngineModelError, type RawGeneration } from "./engine";

/**
 * `err` as a {@link ParamError} when it is the model's refusal of an input (`InputError` of
 * `model/sampling/inputs.ts`, `SeededInputError` of `model/seeded-input.ts`: the same two fields), else
 * undefined. Where the engine calls into the model, this is the one place those become ParamError.
 */
export function asParamError(err: unknown): ParamError | undefined {
  if (err instanceof ParamError) return err;
  if (err instanceof InputError || err instanceof SeededInputError) return new ParamError(err.message, err.param);
  return undefined;
}

/** True for the states in which a model can generate (contract: "States and transitions"). */
export function canGenerate(status: string): status is GenerateModel["status"] {
  return status === "training" || status === "ready";
}

/**
 * Checks `req` against model `rec` (whose status the caller has found `training` or `ready`) and,
 * for a seeded request, its `metadata`, in this order: the length of every given latent vector,
 * the seeded conditions, `temperature`, `top_p`, then the rest of the embedding.
 * @throws ParamError naming the offending parameter; Error when a seeded request's model
 *   has no metadata.
 */
export function checkGenerate(req: GenerateRequest, rec: ModelRecord & { status: GenerateModel["status"] }, metadata: Metadata | undefined): CheckedGeneration {
  const { config } = rec;
  const model: GenerateModel = {
    status: rec.status,
    modelSize: config.model_size,
    embeddingDim: config.embedding_dim,
    privacyNoise: config.privacy_enabled ? config.privacy_noise : 0,
  };
  const { embedding } = req;
  if (Array.isArray(embedding)) {
    const dim = config.embedding_dim;
    for (let i = 0; i < embedding.length; i++) {
      // Finiteness is typia's (the Float32 tag of GenerateRequest) or latentSource's below.
      const row = embedding[i];
      if (Array.isArray(row) && row.length !== dim) {
        throw new ParamError(`Latent vector ${i} has ${row.length} numbers; model ${rec.id} has embedding_dim ${dim}.`, `body.embedding[${i}]`);
      }
    }
  }
  try {
    let seeded: ReturnType<typeof seededSource>;
    if (isSeeded(embedding)) {
      if (metadata === undefined) throw new Error(`model ${rec.id} has no metadata`);
      seeded = seededSource(embedding, metadata);
    }
    const temperature = req.temperature ?? 1;
    if (!(temperature > 0) || !Number.isFinite(1 / temperature)) throw new ParamError("temperature must be > 0", "body.temperature");
    const topP = req.top_p ?? null;
    if (topP !== null && !(topP >= 0 && topP <= 1)) throw new ParamError("top_p must be in [0, 1]", "body.top_p");
    if (seeded) return { model, input: { seeded, ...(seeded.seed !== undefined ? { seed: seeded.seed } : {}), temperature, topP } };
    const source = latentSource(embedding, config.embedding_dim);
    if ("latents" in source) return { model, input: { latents: source.latents, temperature, topP } };
    return { model, input: { numRows: source.numRows, seed: source.seed, calibrate: source.calibrate === true, temperature, topP } };
  } catch (err) {
    throw asParamError(err) ?? err;
  }
}

/**
 * Reads model `id`'s record (and, for a seeded request, its metadata) from `store` and checks
 * `req` against them, for a caller that has not read them itself (a direct caller of the engine,
 * or a worker process of the shared topology, which gets the request over the wire).
 * @throws EngineModelError when the model does not exist or cannot generate in its state;
 *   ParamError as {@link checkGenerate}.
 */
export async function readAndCheck(store: Store, id: string, req: GenerateRequest): Promise<CheckedGeneration> {
  const rec = await store.getModel(id);
  if (rec === undefined) throw new EngineModelError(`No such model: ${id}`, "model_not_found");
  if (!canGenerate(rec.status)) throw new EngineModelError(`Model ${id} is in state '${rec.status}'`, "model_not_ready", rec.status);
  const metadata = isSeeded(req.embedding) ? await store.getMetadata(id) : undefined;
  return checkGenerate(req, { ...rec, status: rec.status }, metadata);
}

/** The worker task of a checked generation of model `id`, and the buffers to transfer with it. */
export function generateTask(id: string, { model, input }: CheckedGeneration): { task: GenerateTask; transfer: ArrayBuffer[] } {
  return { task: { op: "generate", id, model, ...input }, transfer: input.latents ? [input.latents.buffer as ArrayBuffer] : [] };
}

/**
 * The generation in a worker's reply: one Int32Array view per feature.
 * @throws ParamError (the fields the worker's reply carried), EngineModelError (the model was
 *   deleted since it was read), or
 *   Error for anything else the worker reported.
 */
export function generationOf(reply: GenerateReply): RawGeneration {
  if (!reply.ok) {
    if (reply.kind === "param") throw new ParamError(reply.message, reply.param);
    if (reply.kind === "not_found") throw new EngineModelError(reply.message, "model_not_found");
    throw new Error(reply.message);
  }
  const n = reply.num_rows;
  const columns: Record<string, Int32Array> = {};
  reply.features.forEach((f, i) => (columns[f] = reply.codes.subarray(i * n, (i + 1) * n)));
  return { model_id: reply.model_id, num_rows: n, features: reply.features, columns };
}
