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
