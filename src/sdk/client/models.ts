/**
 * `client.models`: methods mirroring the contract's model endpoints and `GET .../metadata`, plus
 * `waitUntilReady`. Retries and errors are the request sender's ({@link Synthd.request}).
 */
import type {
  CreateModelRequest,
  Envelope,
  GenerateRequest,
  Generation,
  ListModelsQuery,
  Metadata,
  Model,
} from "../../contract";
import type { RequestOptions, Requester } from "./request";
import { APIError, TrainingFailedError, TrainingTimeoutError } from "../errors";
import type { ArrayPool } from "./array-pool";
import { readInt32Stream } from "./arrow-int32";

/** apache-arrow (about 150 modules), loaded only for a stream `./arrow-int32` does not read. */
function arrow(): typeof import("apache-arrow") {
  return require("apache-arrow");
}

/** The media type of an Arrow IPC stream (docs/api.md "Arrow responses"). */
export const ARROW_STREAM = "application/vnd.apache.arrow.stream";

/** A generation whose codes may be typed arrays (`columns[f][r]`, Int32Array from Arrow). */
export interface GeneratedCodes {
  model_id: string;
  num_rows: number;
  features: string[];
  columns: Record<string, ArrayLike<number>>;
}

/** One page of `GET /v1/models`: newest first; `has_more` says a further page exists. */
export interface ModelPage {
  data: Model[];
  has_more: boolean;
}

/** Options of {@link Models.waitUntilReady}. */
export interface WaitOptions {
  /**
   * Give up after this many seconds (client clock). Default: the model's
   * `config.max_training_time` (14400 when unknown) + 60 s, since the server stops training then.
   */
  timeoutSeconds?: number;
  /** Milliseconds between polls (default 1000), stretched when the rate limit runs low. */
  pollIntervalMs?: number;
  /** Called with every polled model state (epoch, losses, status). */
  onProgress?: (model: Model) => void;
  /** Aborts the wait. */
  signal?: AbortSignal;
}

/** {@link Models.list}'s result: await it for one page, or `for await` it across every page. */
export class ModelList implements PromiseLike<ModelPage>, AsyncIterable<Model> {
  private page?: Promise<ModelPage>;
  constructor(
    private readonly models: Models,
    private readonly query: ListModelsQuery,
    private readonly opts?: RequestOptions,
  ) {}

  private first(): Promise<ModelPage> {
    this.page ??= this.models.fetchPage(this.query, this.opts);
    return this.page;
  }

  then<A = ModelPage, B = never>(
    onfulfilled?: ((value: ModelPage) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return this.first().then(onfulfilled, onrejected);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Model> {
    let page = await this.first();
    for (;;) {
      yield* page.data;
      if (!page.has_more || page.data.length === 0) return;
      const last = page.data[page.data.length - 1].id;
      page = await this.models.fetchPage({ ...this.query, starting_after: last }, this.opts);
    }
  }
}

/** `/v1/models` endpoints. Every method throws the typed errors of `./errors`. */
export class Models {
  constructor(private readonly client: Requester) {}

  /**
   * `POST /v1/models`: registers a model and starts training.
   * @returns the Model (status `training`, epoch 0).
   * @throws InvalidRequestError (`parameter_invalid`), AuthenticationError, QuotaExceededError,
   *         RateLimitError (after retries).
   */
  async create(body: CreateModelRequest, opts?: RequestOptions): Promise<Model> {
    const res = await this.client.request<Envelope<Model>>({ method: "POST", path: "/v1/models", body, ...opts });
    return res.body.data;
  }

  /** `GET /v1/models/{id}`: the model's current state. @throws NotFoundError. */
  async retrieve(id: string, opts?: RequestOptions): Promise<Model> {
    const res = await this.client.request<Envelope<Model>>({ method: "GET", path: modelPath(id), ...opts });
    return res.body.data;
  }

  /** `GET /v1/models?limit&starting_after`: one page (await) or all models (for await). */
  list(query: ListModelsQuery = {}, opts?: RequestOptions): ModelList {
    return new ModelList(this, query, opts);
  }

  /** Every model of the caller's organization and environment, newest first, page by page. */
  listAutoPaging(query: ListModelsQuery = {}, opts?: RequestOptions): AsyncIterable<Model> {
    return new ModelList(this, query, opts);
  }

  /** Fetches one list page. @internal used by {@link ModelList}. */
  async fetchPage(query: ListModelsQuery, opts?: RequestOptions): Promise<ModelPage> {
    const res = await this.client.request<Envelope<Model[]>>({
      method: "GET",
      path: "/v1/models",
      query: { limit: query.limit, starting_after: query.starting_after },
      ...opts,
    });
    return { data: res.body.data, has_more: res.body.metadata?.has_more === true };
  }

  /** `DELETE /v1/models/{id}` (204): stops training and frees the model. @throws NotFoundError. */
  async delete(id: string, opts?: RequestOptions): Promise<void> {
    await this.client.request<undefined>({ method: "DELETE", path: modelPath(id), ...opts });
  }

  /**
   * `POST /v1/models/{id}/generate`: `embedding` is `{num_rows, seed?}` or latent vectors;
   * at most 100,000 rows per call (use `Synthesizer.sample` for more).
   * @returns codes per feature (`columns[f][r]`).
   * @throws ModelNotReadyError, NotFoundError, InvalidRequestError, QuotaExceededError, APIError.
   */
  async generate(id: string, body: GenerateRequest, opts?: RequestOptions): Promise<Generation> {
    const res = await this.client.request<Envelope<Generation>>({
      method: "POST",
      path: `${modelPath(id)}/generate`,
      body,
      ...opts,
    });
    return res.body.data;
  }

  /**
   * `POST /v1/models/{id}/generate` asking for Arrow with narrow code columns (docs/api.md "Arrow
   * responses"): Int32Array columns without a JSON parse. An Int32 or JSON answer (an older server)
   * is read as such, so this works against any synthd server.
   * @param format `"arrow"` (default) or `"json"` (the contract's form, as {@link generate}).
   * @param arrays a pool to widen narrow columns into (`./array-pool`), for batch after batch.
   * @returns codes per feature (`columns[f][r]`), as the JSON form's.
   * @throws as {@link generate}; APIError (`invalid_response`) for an Arrow body that does not
   *   hold one Int32 column per feature of the generation.
   */
  async generateCodes(
    id: string,
    body: GenerateRequest,
    opts: RequestOptions & { format?: "arrow" | "json"; arrays?: ArrayPool } = {},
  ): Promise<GeneratedCodes> {
    const { format = "arrow", arrays, ...requestOpts } = opts;
    if (format === "json") return this.generate(id, body, requestOpts);
    const res = await this.client.request<Envelope<Generation> | Uint8Array>({
      method: "POST",
      path: `${modelPath(id)}/generate`,
      body,
      accept: `${ARROW_STREAM};codes=narrow, application/json;q=0.5`,
      binaryType: ARROW_STREAM,
      ...(arrays !== undefined ? { bodyInto: (size: number) => arrays.bytes(size) } : {}),
      ...requestOpts,
    });
    if (!(res.body instanceof Uint8Array)) return (res.body as Envelope<Generation>).data;
    const codes = codesFromArrow(res.body, res.requestId, arrays);
    // The body's memory goes back with its column views; if every column was widened, it goes now.
    const memory = res.body.buffer;
    if (arrays !== undefined && !Object.values(codes.columns).some((c) => ArrayBuffer.isView(c) && c.buffer === memory)) arrays.give([res.body]);
    return codes;
  }

  /** `GET /v1/models/{id}/metadata`: the metadata sent at creation. @throws NotFoundError. */
  async metadata(id: string, opts?: RequestOptions): Promise<Metadata> {
    const res = await this.client.request<Envelope<Metadata>>({ method: "GET", path: `${modelPath(id)}/metadata`, ...opts });
    return res.body.data;
  }

  /**
   * Polls `GET /v1/models/{id}` until the model is `ready`.
   * @returns the ready Model.
   * @throws TrainingFailedError when it reaches `failed` (carrying `model.error`),
   *         TrainingTimeoutError after `timeoutSeconds`, NotFoundError when it was deleted.
   */
  async waitUntilReady(id: string, opts: WaitOptions = {}): Promise<Model> {
    const start = Date.now();
    const interval = opts.pollIntervalMs ?? 1000;
    let timeoutSeconds = opts.timeoutSeconds;
    for (;;) {
      const model = await this.retrieve(id, { signal: opts.signal });
      opts.onProgress?.(model);
      if (model.status === "ready") return model;
      if (model.status === "failed") throw new TrainingFailedError(model);
      timeoutSeconds ??= (model.config?.max_training_time ?? 14400) + 60;
      const elapsed = (Date.now() - start) / 1000;
      if (elapsed >= timeoutSeconds) throw new TrainingTimeoutError(model, timeoutSeconds);
      const wait = Math.min(this.pollDelay(interval), Math.max(0, (timeoutSeconds - elapsed) * 1000));
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, wait);
        opts.signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(t);
            reject(opts.signal!.reason);
          },
          { once: true },
        );
      });
    }
  }

  /** Poll interval, stretched to spread the remaining rate-limit budget over the window. */
  private pollDelay(interval: number): number {
    const rl = this.client.lastRateLimit;
    if (!rl || rl.limit <= 0 || rl.remaining >= rl.limit / 4) return interval;
    const untilReset = Math.max(0, rl.reset * 1000 - Date.now());
    return Math.max(interval, Math.min(60_000, untilReset / Math.max(1, rl.remaining)));
  }
}

function modelPath(id: string): string {
  return `/v1/models/${encodeURIComponent(id)}`;
}

/**
 * The codes of an Arrow Generate response (docs/api.md "Arrow responses") as Int32Array columns:
 * the server's own stream without apache-arrow (`./arrow-int32`), any other bytes with it.
 * @throws APIError (`invalid_response`) when the stream is not such a table.
 */
export function codesFromArrow(bytes: Uint8Array, requestId?: string, arrays?: ArrayPool): GeneratedCodes {
  const bad = (why: string): APIError =>
    new APIError({ code: "invalid_response", message: `The Arrow generate response ${why}.`, ...(requestId ? { requestId } : {}) });
  const stream = readInt32Stream(bytes, arrays);
  if (stream !== undefined) {
    if (stream.metadata.get("synthd.object") !== "generation") throw bad("is not a generation");
    const columns: Record<string, ArrayLike<number>> = {};
    stream.fields.forEach((f, j) => (columns[f] = stream.columns[j]));
    return { model_id: stream.metadata.get("synthd.model_id") ?? "", num_rows: stream.numRows, features: stream.fields, columns };
  }
  const { tableFromIPC } = arrow();
  let table;
  try {
    table = tableFromIPC(bytes);
  } catch (e) {
    throw bad(`is not an Arrow IPC stream (${e instanceof Error ? e.message : String(e)})`);
  }
  const meta = table.schema.metadata;
  if (meta.get("synthd.object") !== "generation") throw bad("is not a generation");
  const features = table.schema.fields.map((f) => f.name);
  const columns: Record<string, ArrayLike<number>> = {};
  for (const f of features) {
    const col = table.getChild(f)!;
    const values = col.toArray() as unknown;
    if (values instanceof Int32Array) columns[f] = values;
    else if (values instanceof Uint8Array || values instanceof Uint16Array) columns[f] = new Int32Array(values);
    else throw bad(`has a column "${f}" that is not Int32, Uint16 or Uint8`);
  }
  return { model_id: meta.get("synthd.model_id") ?? "", num_rows: table.numRows, features, columns };
}
