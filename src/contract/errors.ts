/**
 * Contract-level errors: {@link ApiError}, an error with one of the contract's codes, and
 * {@link ParamError}, the one error of a bad parameter. `src/server/errors.ts` turns either into the
 * error envelope.
 */
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
 * The one error of a bad parameter, from wherever it is found to the error envelope: `param` is
 * the contract's path of the offending value (`body.embedding[3]`, `body.config.batch_size`,
 * `src/contract/params.ts`), `message` the sentence for the client. The engine throws it, a
 * worker's reply carries its two fields as they are, and `src/server/errors.ts` maps it once to
 * 400 `parameter_invalid` with that param and message.
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
