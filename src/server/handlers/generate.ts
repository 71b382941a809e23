/**
 * Handler of Generate Synthetic Data, `POST /v1/models/{model_id}/generate` (contract: "Generate
 * Synthetic Data"). Checks in order, after typia's shape check:
 * 1. rows in 1..{@link MAX_ROWS_PER_REQUEST} (param `body.embedding`), seed rows in
 *    1..{@link MAX_SEED_ROWS_PER_REQUEST} (`body.embedding.seed_data.rows`): else 400;
 * 2. the model exists and is the caller's: else 404 `model_not_found`;
 * 3. its status is `training` or `ready`: else 400 `model_not_ready`;
 * 4. the request against the model, once (`checkGenerate`, `src/engine/generate-task.ts`): latent
 *    length, seeded input (`seededSource`; docs/api.md "Seeded generation"), temperature: 400
 *    `parameter_invalid` with the exact param;
 * 5. the rows are charged in one transaction (402 `quota_exceeded`, nothing charged, if over);
 * 6. the engine generates; on failure the charge is refunded and the error mapped (`errors.ts`).
 * So no 4xx charges anything. Seeded requests are charged the rows they return.
 *
 * 200, envelope `generation`; or an Arrow IPC stream when `Accept` prefers it (`../arrow.ts`).
 */
import { isSeeded } from "../../model";
import { canGenerate, checkGenerate } from "../../engine/generate-task";
import { MAX_ROWS_PER_REQUEST, MAX_SEED_ROWS_PER_REQUEST, type GenerateRequest } from "../../contract";
import { ARROW_STREAM, generationToArrow, prefersArrow, wantsNarrowCodes } from "../arrow";
import { ParamError } from "../../contract/errors";
import { ApiError, ClientAbortedError } from "../errors";
import { charge, refund } from "../../usage/quota";
import type { HandlerCtx, Reply } from "../context";
import { ownedModel } from "./models";

/** `POST /v1/models/{model_id}/generate`: 200 with a Generation. */
export async function generate(ctx: HandlerCtx<GenerateRequest, unknown>): Promise<Reply> {
  const { embedding } = ctx.body;
  const seedRows = !Array.isArray(embedding) && "seed_data" in embedding;
  const rows = Array.isArray(embedding) ? embedding.length : "seed_data" in embedding ? embedding.seed_data.rows.length : embedding.num_rows;
  if (seedRows && (rows < 1 || rows > MAX_SEED_ROWS_PER_REQUEST)) {
    throw new ParamError(
      `A request can hold 1 to ${MAX_SEED_ROWS_PER_REQUEST} seed rows; this one has ${rows}. Split larger seed tables (the SDK does).`,
      "body.embedding.seed_data.rows",
    );
  }
  if (rows < 1 || rows > MAX_ROWS_PER_REQUEST) {
    throw new ParamError(
      `A request can generate 1 to ${MAX_ROWS_PER_REQUEST} rows; this one asks for ${rows}. Split larger requests.`,
      "body.embedding",
    );
  }

  const { store, engine, clock, logger } = ctx.services;
  const model = await ownedModel(ctx);
  const { status } = model;
  if (!canGenerate(status)) {
    throw new ApiError(
      "model_not_ready",
      `Model ${model.id} is in state '${status}'; generation needs state 'training' or 'ready'.`,
    );
  }
  const metadata = isSeeded(embedding) ? await store.getMetadata(model.id) : undefined;
  const checked = checkGenerate(ctx.body, { ...model, status }, metadata);

  // The client went away meanwhile: nothing will be answered, so nothing is charged or generated.
  if (ctx.aborted()) throw new ClientAbortedError();
  const charged = await charge(store, ctx.auth, rows, model.id, ctx.requestId, clock());
  // A failed generation gives the rows back before its error reaches the client.
  const refundOnFailure = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      await refund(store, charged, clock()).catch((refundErr: unknown) =>
        logger.error({ err: refundErr, req_id: ctx.requestId, model_id: model.id, rows }, "could not refund a failed generation"),
      );
      throw err;
    }
  };
  if (prefersArrow(ctx.accept)) {
    const raw = await refundOnFailure(() => engine.generateRaw(model.id, ctx.body, checked));
    const bytes = generationToArrow(raw, new Date(clock()).toISOString(), wantsNarrowCodes(ctx.accept));
    return { kind: "binary", status: 200, contentType: ARROW_STREAM, bytes, headers: { Vary: "Accept" } };
  }
  const generation = await refundOnFailure(() => engine.generate(model.id, ctx.body, checked));
  return { kind: "envelope", status: 200, object: "generation", data: generation, headers: { Vary: "Accept" } };
}
