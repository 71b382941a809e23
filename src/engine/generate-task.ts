/**
 * A Generate request as a worker task, and the worker's reply as a result: the part of
 * generation that runs on the calling thread. Sampling options and the request's rows are checked
 * here; given latents are flattened and transferred; seeded requests (`embedding.condition` /
 * `embedding.seed_data`) are checked against the model's metadata and put in its feature order
 * (`model/seeded-input.ts`), and the worker draws them from the model's conditional
 * (`worker/seeded.ts`). The codes come back as one transferred Int32Array, viewed per feature.
 */
import type { GenerateRequest, Metadata } from "../types";
import { InputError, latentSource } from "../model/generate";
import { isSeeded, seededSource, SeededInputError } from "../model/seeded-input";
import type { GenerateReply, GenerateTask } from "./protocol";
import { EngineModelError, GenerateInputError, type RawGeneration } from "./types";

/**
 * The worker task of `req` for model `id` (whose `embedding_dim` is given), and the buffers to
 * transfer with it. `metadata` is read only for a seeded request.
 * @throws GenerateInputError naming the offending parameter.
 */
export async function generateTask(
  id: string,
  req: GenerateRequest,
  embeddingDim: number,
  metadata: () => Promise<Metadata>,
): Promise<{ task: GenerateTask; transfer: ArrayBuffer[] }> {
  const temperature = req.temperature ?? 1;
  if (!(temperature > 0) || !Number.isFinite(1 / temperature)) throw new GenerateInputError("temperature must be > 0", "body.temperature");
  const topP = req.top_p ?? null;
  if (topP !== null && !(topP >= 0 && topP <= 1)) throw new GenerateInputError("top_p must be in [0, 1]", "body.top_p");
  try {
    const seeded = isSeeded(req.embedding) ? seededSource(req.embedding, await metadata()) : undefined;
    if (seeded) {
      return { task: { op: "generate", id, seeded, ...(seeded.seed !== undefined ? { seed: seeded.seed } : {}), temperature, topP }, transfer: [] };
    }
    const source = latentSource(req.embedding, embeddingDim);
    if ("latents" in source) {
      return { task: { op: "generate", id, latents: source.latents, temperature, topP }, transfer: [source.latents.buffer as ArrayBuffer] };
    }
    return {
      task: { op: "generate", id, numRows: source.numRows, seed: source.seed, calibrate: source.calibrate === true, temperature, topP },
      transfer: [],
    };
  } catch (err) {
    if (err instanceof InputError || err instanceof SeededInputError) throw new GenerateInputError(err.message, err.param);
    throw err;
  }
}

/**
 * The generation in a worker's reply: one Int32Array view per feature.
 * @throws GenerateInputError, EngineModelError (the model was deleted or changed state since it was
 *   read), or Error for anything else the worker reported.
 */
export function generationOf(reply: GenerateReply): RawGeneration {
  if (!reply.ok) {
    if (reply.kind === "input") throw new GenerateInputError(reply.message, reply.param ?? "body.embedding");
    if (reply.kind === "not_found") throw new EngineModelError(reply.message, "model_not_found");
    if (reply.kind === "not_ready") throw new EngineModelError(reply.message, "model_not_ready", reply.status);
    throw new Error(reply.message);
  }
  const n = reply.num_rows;
  const columns: Record<string, Int32Array> = {};
  reply.features.forEach((f, i) => (columns[f] = reply.codes.subarray(i * n, (i + 1) * n)));
  return { model_id: reply.model_id, num_rows: n, features: reply.features, columns };
}
