/**
 * Handler of Generate Synthetic Data, `POST /v1/models/{model_id}/generate` (contract: "Generate
 * Synthetic Data").
 *
 * Order of checks, after typia has checked the body's shape:
 * 1. rows requested (`embedding.num_rows`, or the number of latent vectors) in
 *    1..{@link MAX_ROWS_PER_REQUEST}: else 400 `parameter_invalid`, param `body.embedding`; seed
 *    rows (`embedding.seed_data.rows`) in 1..{@link MAX_SEED_ROWS_PER_REQUEST}: else param
 *    `body.embedding.seed_data.rows`;
 * 2. the model exists and is the caller's: else 404 `model_not_found`;
 * 3. its status is `training` or `ready`: else 400 `model_not_ready` naming the id and state;
 * 4. the request is checked against the model, once (`checkGenerate` in
 *    `src/engine/generate-task.ts`; the engine runs what it returns without reading the model
 *    again): every latent vector has `config.embedding_dim` numbers, else 400
 *    `parameter_invalid`, param `body.embedding[i]` (typia has already refused a value outside
 *    the float32 range, param `body.embedding[i][j]`: latents are computed in float32, where
 *    `1e308` is Infinity); a seeded request (`condition` or `seed_data`, docs/api.md "Seeded
 *    generation") is checked against the model's metadata by `seededSource`
 *    (`src/model/conditional/seeded-input.ts`): unknown feature, code outside [0, K), empty code list, ragged
 *    seed row, a bad weighted cell -> 400 `parameter_invalid` with the exact param
 *    (`body.embedding.condition.age`, `body.embedding.seed_data.rows[3][1]`, ...); a temperature
 *    whose inverse overflows -> param `body.temperature`;
 * 5. the rows are charged to the caller's monthly quota in one transaction: a request that would
 *    cross it is 402 `quota_exceeded` and charges nothing (`src/usage/quota.ts`);
 * 6. the engine generates. If it fails the charge is refunded, and `ParamError` (an input
 *    the model refuses while sampling, e.g. a condition of probability 0) -> 400
 *    `parameter_invalid` with its param; `EngineUnavailableError` -> 503
 *    `training_service_unavailable` with `Retry-After`; anything else -> 500 `internal_error`
 *    (mapped in `errors.ts`).
 *
 * Nothing is charged before step 5, so every 4xx above charges nothing. Seeded requests are charged
 * the rows they return (`num_rows`, or one per seed row).
 *
 * 200, envelope `generation`, data = the engine's Generation `{ model_id, num_rows, features, columns }`;
 * or, when the request's Accept header prefers `application/vnd.apache.arrow.stream`, the same
 * generation as an Arrow IPC stream (`../arrow.ts`; docs/api.md "Arrow responses"). Errors are JSON
 * either way.
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

  // The client went away meanwhile (or uWS closed the connection over a pipelined request):
  // nothing will be answered, so nothing is charged or generated.
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
