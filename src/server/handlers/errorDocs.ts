/**
 * Handler of `GET /docs/errors` (public): an HTML page with an element per error code, so the
 * default `error.doc_url` (`{base_url}/docs/errors#<code>`) resolves without a docs site.
 */
import { ERROR_CODES, type ErrorCode } from "../../contract";
import type { HandlerCtx, Reply } from "../context";

/** When each code is returned (contract: "Error codes"; extensions of the contract). */
export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  api_key_missing: "A /v1 request without an Authorization header. Send 'Authorization: Bearer <API_KEY>'.",
  api_key_invalid: "The key matches no known key, or the header is not of the form 'Bearer <API_KEY>'.",
  parameter_invalid:
    "The request failed validation: missing required field, wrong type, unknown field or out of range. " +
    "'param' names the field, e.g. body.config.batch_size, query.limit, headers.content-type; " +
    "headers.idempotency-key when the key is longer than 255 characters or was used with a different request; " +
    "body for JSON nested more than 64 levels; headers.content-length or headers.transfer-encoding when the body's " +
    "length is declared ambiguously (the connection is then closed).",
  model_not_found: "The model id does not exist, is malformed, or belongs to another organization or environment.",
  model_not_ready: "The operation needs a model in state training or ready; the message names the model and its state.",
  training_service_unavailable: "The training service is temporarily unavailable (no worker can take the work, or the server's storage is full; nothing was changed or charged). Retry after the Retry-After seconds.",
  idempotency_key_in_use: "A concurrent request with the same Idempotency-Key is still in progress.",
  quota_exceeded:
    "The organization's monthly row quota (per environment, calendar month UTC) is used up, or a Generate request would cross it; nothing was charged. " +
    "The sandbox (svc_test_ keys) has a fixed free tier of 100,000 rows; live keys have the organization's plan. On a self-hosted server " +
    "the operator creates a live key (synthd keys create --org ORG --env live) and sets the plan (synthd orgs set --org ORG --live-quota N). " +
    "Create Model also gets it when the organization already keeps the most models the server allows (synthd serve --max-models-per-org, " +
    "default 1,000, sandbox and live together): deleting models makes room.",
  rate_limit_exceeded:
    "The organization exceeded its request rate limit, this address sent too many requests with a missing or invalid key, " +
    "or (Create Model) the organization already has the most models waiting to train that the server queues. Retry after the Retry-After seconds.",
  internal_error: "An unexpected server error. Quote the request_id when reporting it.",
  request_too_large:
    "The request body exceeds the server's size limit (16 MiB by default). The answer comes once the body has been received " +
    "and discarded, up to 4 times the limit; a larger body is answered at once and the connection closed.",
  route_not_found: "No endpoint has this URL.",
  method_not_allowed: "The URL exists but not with this HTTP method; the Allow header lists the methods it takes.",
};

/** `GET /docs/errors`: 200, `text/html`. */
export async function errorDocs(_ctx: HandlerCtx<unknown, unknown>): Promise<Reply> {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[])
    .map((code) => {
      const { status, type } = ERROR_CODES[code];
      return `<tr id="${code}"><td><code>${code}</code></td><td>${status}</td><td><code>${type}</code></td><td>${escape(ERROR_DESCRIPTIONS[code])}</td></tr>`;
    })
    .join("\n");
  const text = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>synthd API errors</title></head>
<body><h1>synthd API errors</h1>
<p>Every error response has the body <code>{"error": {"type", "code", "message", "doc_url", "param"?}, "request_id"}</code>;
<code>request_id</code> equals the <code>X-Request-Id</code> header.</p>
<table><thead><tr><th>Code</th><th>HTTP status</th><th>Type</th><th>When</th></tr></thead>
<tbody>
${rows}
</tbody></table></body></html>
`;
  return { kind: "text", status: 200, contentType: "text/html; charset=utf-8", text };
}

function escape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
