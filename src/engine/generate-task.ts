/**
 * A Generate request as a worker task, and the reply as a result: the calling thread's part. The
 * request is checked once against the record (seeded: and metadata) by whoever read them (the
 * handler before charging, or {@link readAndCheck}); the worker takes it as is. Latents are
 * transferred; seeded conditions go in feature order; codes return as one Int32Array.
 */
import type { GenerateRequest, Metadata } from "../contract";
import type { ModelRecord, Store } from "../store";
import { InputError, isSeeded, latentSource, seededSource, SeededInputError } from "../model";
import type { CheckedGeneration, GenerateModel, GenerateReply, GenerateTask } from "./protocol";
import { ParamError } from "../contract/errors";
import { EngineModelError, type RawGeneration } from "./engine";

/**
 * `err` as a {@link ParamError} when it is the model's refusal of an input (`InputError`,
 * `SeededInputError`: same two fields), else undefined: the one place those become ParamError.
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
 * Checks `req` against model `rec` (`training` or `ready`) and, seeded, its `metadata`: latent
 * lengths, conditions, `temperature`, `top_p`, then the rest.
 * @throws ParamError naming the parameter; Error when a seeded request's model has no metadata.
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
 * Reads model `id`'s record (seeded: and metadata) and checks `req`, for callers that have not
 * (direct engine callers, shared-topology workers).
 * @throws EngineModelError when the model is missing or cannot generate; ParamError.
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
 * The generation in a worker's reply, one Int32Array view per feature.
 * @throws ParamError (from the reply), EngineModelError (deleted since read), Error otherwise.
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
