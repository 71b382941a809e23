/**
 * Handlers of Get Model, List Models, Delete Model and Get Model Metadata (contract: "Endpoints").
 * A model of another org or environment is answered like a missing one (Authentication rule 5).
 */
import { CursorNotFoundError, isModelId, type ModelRecord } from "../../store";
import type { ListModelsQuery, Metadata, Model } from "../../contract";
import { modelNotFound, paramInvalid, truncate } from "../errors";
import type { HandlerCtx, Reply } from "../context";

/** Default page size of List Models (contract: "Limits"; the 1..100 bounds are typia tags on `ListModelsQuery`). */
export const LIST_LIMIT_DEFAULT = 20;

/** The caller's model `model_id`. @throws ApiError 404 `model_not_found` otherwise. */
export async function ownedModel(ctx: HandlerCtx<unknown, unknown>): Promise<ModelRecord> {
  const id = ctx.params.model_id;
  const rec = isModelId(id) ? await ctx.services.store.getOwnedModel(id, ctx.auth.org, ctx.auth.env) : undefined;
  if (rec === undefined) throw modelNotFound(id);
  return rec;
}

/** The public Model of a stored record: exactly the contract's fields (never `org` or `env`). */
export function toPublicModel(r: ModelRecord): Model {
  return {
    id: r.id,
    status: r.status,
    config: r.config,
    current_epoch: r.current_epoch,
    train_loss: r.train_loss,
    val_loss: r.val_loss,
    created_at: r.created_at,
    updated_at: r.updated_at,
    error: r.error,
  };
}

/** `GET /v1/models/{model_id}`: 200, envelope `model`. */
export async function getModel(ctx: HandlerCtx<unknown, unknown>): Promise<Reply> {
  return { kind: "envelope", status: 200, object: "model", data: toPublicModel(await ownedModel(ctx)) };
}

/**
 * `GET /v1/models?limit=&starting_after=`: 200, envelope `list`, newest first (ties by id). A
 * cursor naming none of the caller's models: 400 `parameter_invalid` on `query.starting_after`.
 */
export async function listModels(ctx: HandlerCtx<unknown, ListModelsQuery>): Promise<Reply> {
  const { limit = LIST_LIMIT_DEFAULT, starting_after } = ctx.query;
  try {
    const page = await ctx.services.store.listModels(ctx.auth.org, ctx.auth.env, limit, starting_after);
    return { kind: "envelope", status: 200, object: "list", data: page.items.map(toPublicModel), has_more: page.has_more };
  } catch (err) {
    if (err instanceof CursorNotFoundError) {
      throw paramInvalid(
        "query.starting_after",
        `starting_after must be the id of one of your models; no such model: ${JSON.stringify(truncate(starting_after ?? "", 64))}.`,
      );
    }
    throw err;
  }
}

/**
 * `DELETE /v1/models/{model_id}`: removes record, metadata and checkpoint in one transaction (a
 * tombstone keeps the id a valid List cursor for a day), then stops the model without waiting.
 * 204 at once. Nothing of it comes back: every training write checks in its transaction that the
 * model exists (`Store.updateModel`), so a training that missed the stop ends at its next write.
 */
export async function deleteModel(ctx: HandlerCtx<unknown, unknown>): Promise<Reply> {
  const rec = await ownedModel(ctx);
  const { engine, store, logger, clock } = ctx.services;
  await store.deleteModel(rec.id, clock());
  // Not awaited: the answer does not wait for the step in flight (up to a minute).
  engine.stop(rec.id).catch((err: unknown) =>
    logger.warn({ err, req_id: ctx.requestId, model_id: rec.id }, "deleted model could not be stopped now; its training ends at its next write"),
  );
  return { kind: "empty", status: 204 };
}

/** `GET /v1/models/{model_id}/metadata`: 200, envelope `model_metadata`, the metadata sent at creation. */
export async function getModelMetadata(ctx: HandlerCtx<unknown, unknown>): Promise<Reply> {
  const rec = await ownedModel(ctx);
  const metadata: Metadata | undefined = await ctx.services.store.getMetadata(rec.id);
  if (metadata === undefined) throw modelNotFound(rec.id); // deleted between the two reads
  return { kind: "envelope", status: 200, object: "model_metadata", data: metadata };
}
