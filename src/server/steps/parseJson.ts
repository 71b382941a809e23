/**
 * Step `parseJson` (contract: "All bodies are JSON"; DESIGN §3): on POST the body must be sent with
 * `Content-Type: application/json` (parameters such as `; charset=utf-8` allowed) and must be
 * valid UTF-8 JSON.
 *
 * - other or missing content type: 400 `parameter_invalid`, param `headers.content-type`;
 * - invalid UTF-8 or JSON (an empty body included): 400 `parameter_invalid`, param `body`.
 *
 * Bodies of GET and DELETE requests are ignored.
 */
import type { Step } from "../context";
import { paramInvalid } from "../errors";

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Sets `ctx.json` on POST, or throws 400. */
export const parseJson: Step = (ctx, next) => {
  if (ctx.method !== "POST") return next();
  const type = (ctx.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json") {
    throw paramInvalid(
      "headers.content-type",
      "POST requests must send a JSON body with the header 'Content-Type: application/json'.",
    );
  }
  let text: string;
  try {
    text = UTF8.decode(ctx.rawBody ?? Buffer.alloc(0));
  } catch {
    throw paramInvalid("body", "The request body is not valid UTF-8.");
  }
  try {
    ctx.json = JSON.parse(text);
  } catch (err) {
    const why = err instanceof SyntaxError ? ` (${err.message})` : "";
    throw paramInvalid("body", `The request body is not valid JSON${why}.`);
  }
  return next();
};
