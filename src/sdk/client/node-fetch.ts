/**
 * The part of `fetch` the client uses (`Synthd`'s `fetch` option, `./client`), on `node:http` and
 * `node:https`: for short-lived processes such as the `synthd` CLI. Node's own `fetch` compiles its
 * bundled undici on the first call, about 0.2 core-s (more than the rest of `synthd sample -n 10`
 * together); `node:http` is part of Node's start-up snapshot.
 *
 * What the client sends and reads is the same: the method, its headers, a string body (with its
 * Content-Length, as fetch sends it), the abort signal; the status, the headers (lower-case names, a
 * repeated header joined with ", " as Node's parser joins it) and the whole body. Connections are kept
 * alive by Node's global agents, whose idle sockets do not hold the process open. Unlike fetch it
 * does not follow redirects (the API never redirects; a 3xx is an error response like any other),
 * decompress bodies (it asks for none) or add fetch's browser headers (`sec-fetch-mode`,
 * `accept-language`, `accept-encoding`).
 *
 * Failures reject as fetch's do for the client: a connection error with Node's error (the message
 * fetch's `cause` carries, e.g. `connect ECONNREFUSED 127.0.0.1:8080`), an abort with the signal's
 * reason, a URL scheme other than http and https with `unknown scheme`.
 */
import type { IncomingMessage } from "node:http";

/** The response fields the client reads. */
export interface NodeResponse {
  status: number;
  headers: Record<string, string>;
  arrayBuffer(): Promise<ArrayBuffer>;
  /**
   * The whole body read into memory from `into(size)` when its length is known (Content-Length):
   * no list of chunks joined afterwards, and memory a caller can reuse response after response
   * (`RequestSpec.bodyInto`); without a length, the body as {@link arrayBuffer} reads it.
   * @returns a view of `size` bytes; rejects as `arrayBuffer`, and when the body is longer or
   *   shorter than its Content-Length.
   */
  bytes(into: (size: number) => Uint8Array): Promise<Uint8Array>;
}

/** What {@link nodeFetch} reads of fetch's `init`. */
interface NodeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

/** `res`'s headers as a record of strings (`set-cookie`, the only list Node keeps, joined with ", "). */
function headersOf(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

/** The whole body of `res` as an ArrayBuffer; rejects when the stream fails or is cut short (an abort). */
async function bodyOf(res: IncomingMessage): Promise<ArrayBuffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const all = Buffer.concat(chunks);
  // A body of its own ArrayBuffer (Buffer.concat of large bodies) is handed over without a copy.
  if (all.byteOffset === 0 && all.byteLength === all.buffer.byteLength) return all.buffer as ArrayBuffer;
  return all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer;
}

/** {@link NodeResponse.bytes}. */
async function bytesOf(res: IncomingMessage, into: (size: number) => Uint8Array): Promise<Uint8Array> {
  const length = Number(res.headers["content-length"]);
  if (!(Number.isSafeInteger(length) && length >= 0)) return new Uint8Array(await bodyOf(res));
  const out = into(length).subarray(0, length);
  let at = 0;
  for await (const chunk of res) {
    const c = chunk as Buffer;
    if (at + c.length > length) throw new Error(`the body is longer than its Content-Length (${length})`);
    out.set(c, at);
    at += c.length;
  }
  if (at !== length) throw new Error(`the body ended after ${at} of its ${length} bytes`);
  return out;
}

/**
 * `fetch(url, init)` for `SynthdOptions.fetch`, on `node:http` / `node:https` (see the module
 * comment for what it does and does not do of fetch).
 * ```ts
 * const client = new Synthd({ apiKey, fetch: nodeFetch });
 * ```
 */
export const nodeFetch = ((input: string | URL, init: NodeFetchInit = {}): Promise<NodeResponse> => {
  const url = typeof input === "string" ? new URL(input) : input;
  if (url.protocol !== "http:" && url.protocol !== "https:") return Promise.reject(new Error("unknown scheme"));
  // node:https (and TLS) loads only for an https URL.
  const transport: typeof import("node:http") = url.protocol === "https:" ? require("node:https") : require("node:http");
  const headers: Record<string, string | number> = { ...init.headers };
  if (init.body !== undefined) headers["Content-Length"] = Buffer.byteLength(init.body);
  return new Promise<NodeResponse>((resolve, reject) => {
    const req = transport.request(url, { method: init.method ?? "GET", headers, signal: init.signal }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: headersOf(res), arrayBuffer: () => bodyOf(res), bytes: (into) => bytesOf(res, into) });
    });
    req.on("error", (e) => reject(init.signal?.aborted ? init.signal.reason : e));
    req.end(init.body);
  });
}) as unknown as typeof fetch;
