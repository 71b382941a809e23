/** Contract errors {@link ApiError} and {@link ParamError}, enveloped by `src/server/errors.ts`. */
import { ERROR_CODES, type ErrorCode } from "./envelope";

/**
 * An error with a contract code. `param` is the offending parameter path
 * (`body.config.batch_size`, `query.limit`, `headers.content-type`); `headers` are added to the
 * response (e.g. `Retry-After`, `Allow`).
 */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  /** HTTP status of {@link code} (from `ERROR_CODES`). */
  get status(): number {
    return ERROR_CODES[this.code].status;
  }
}

/**
 * The one error of a bad parameter: `param` the contract path of the offending value
 * (`body.embedding[3]`, `src/contract/params.ts`), `message` the client's sentence. Worker replies
 * carry both as they are; `src/server/errors.ts` maps it to 400 `parameter_invalid`.
 */
export class ParamError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
    this.name = "ParamError";
  }
}
