/**
 * The HTTP front end: a uWebSockets.js app whose single catch-all route hands every request to the
 * pipeline (`pipeline.ts`) and writes the response it produces (DESIGN §4, main thread).
 *
 * uWS rules followed here: everything needed from the stack-allocated `HttpRequest` is copied
 * before any `await`; `res.onAborted` is attached first, and after it fires nothing is written;
 * the body's `onData` is attached synchronously (`startBodyRead`); writes after an `await` happen
 * inside `res.cork`.
 */
import { STATUS_CODES } from "node:http";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import uWS, { type HttpRequest, type HttpResponse, type us_listen_socket } from "uWebSockets.js";
import type { Engine } from "../engine/types";
import { newRequestId, type Store } from "../store";
import type { Ctx, Services } from "./context";
import { errorBody, setErrorResponse, toApiError } from "./errors";
import { createLogger } from "./log";
import { runPipeline } from "./pipeline";
import { startBodyRead } from "./steps/readBody";

/** Default `maxBodyBytes`: 16 MiB (DESIGN §3). */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Options of {@link startServer}. */
export interface ServerOptions {
  /** Address to bind, e.g. `127.0.0.1`, `0.0.0.0`, `::1`. */
  host: string;
  /** TCP port; 0 picks a free one (read it from the result). */
  port: number;
  store: Store;
  engine: Engine;
  /** Include the underlying message in `internal_error` responses. Default false. */
  debug?: boolean;
  /** Base of `error.doc_url`; default the server's own base URL `http://HOST:PORT`. */
  docsUrl?: string;
  /** Largest request body in bytes; default {@link DEFAULT_MAX_BODY_BYTES}. */
  maxBodyBytes?: number;
  /** Default: pino to stderr at level `info`. */
  logger?: Logger;
}

/** A listening server. */
export interface RunningServer {
  /** Base URL, `http://HOST:PORT` (IPv6 hosts in brackets). */
  url: string;
  /** The actual port (useful with `port: 0`). */
  port: number;
  /**
   * Stops accepting connections, waits up to 10 s for requests in flight to be answered, then
   * closes the remaining (keep-alive) connections. Idempotent. Does not close the store or engine.
   */
  close(): Promise<void>;
}

const DRAIN_TIMEOUT_MS = 10_000;
/** uSockets listen option (exported at run time as `uWS.LIBUS_LISTEN_EXCLUSIVE_PORT`; typed only as an enum). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/**
 * Starts the HTTP server (contract: all endpoints under `/v1`, plus the public `/docs/errors`).
 * The port is bound exclusively (no `SO_REUSEPORT`): a second server on the same port fails.
 * @throws Error when the address cannot be bound (in use, or not an address of this host).
 */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger();
  const services: Services = {
    store: opts.store,
    engine: opts.engine,
    logger,
    debug: opts.debug ?? false,
    docsUrl: "",
    maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
  };

  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  const app = uWS.App();

  app.any("/*", (res: HttpResponse, req: HttpRequest) => {
    let ctx: Ctx | undefined;
    res.onAborted(() => {
      if (ctx === undefined) return;
      ctx.aborted = true;
      ctx.bodySource.abort();
    });
    try {
      const headers: Record<string, string> = {};
      req.forEach((k, v) => {
        if (!Object.hasOwn(headers, k)) headers[k] = v;
      });
      ctx = {
        services,
        method: req.getMethod().toUpperCase(),
        path: req.getUrl(),
        rawQuery: req.getQuery() ?? "",
        headers,
        remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
        startedAt: performance.now(),
        bodySource: startBodyRead(res, headers, services.maxBodyBytes),
        aborted: false,
        requestId: "",
        responseHeaders: {},
      };
    } catch (err) {
      // Never let an exception escape a uWS callback: answer 500 and drop the connection.
      const requestId = newRequestId();
      logger.error({ err, req_id: requestId }, "could not read request");
      const body = errorBody(toApiError(err, services.debug), requestId, services.docsUrl);
      res
        .writeStatus("500 Internal Server Error")
        .writeHeader("X-Request-Id", requestId)
        .writeHeader("Content-Type", "application/json")
        .end(JSON.stringify(body), true);
      return;
    }
    const c = ctx;
    inFlight++;
    runPipeline(c)
      .catch((err: unknown) => {
        // The error boundary catches everything after `requestId`; this is the last resort.
        logger.error({ err, req_id: c.requestId }, "request pipeline failed");
        setErrorResponse(c, new Error("pipeline failure"));
      })
      .then(() => writeResponse(res, c))
      .catch((err: unknown) => logger.error({ err, req_id: c.requestId }, "could not write response"))
      .finally(() => {
        logRequest(logger, c);
        if (--inFlight === 0) onIdle?.();
      });
  });

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    // Exclusive: without it uSockets sets SO_REUSEPORT and a second server on the same port
    // would start too and silently take half the connections. The (host, port, options, cb)
    // form exists in the binding but not in its typings.
    const listen = app.listen as unknown as (
      host: string,
      port: number,
      options: number,
      cb: (ls: us_listen_socket | false) => void,
    ) => void;
    listen.call(app, opts.host, opts.port, LIBUS_LISTEN_EXCLUSIVE_PORT, (ls) => {
      if (ls === false) reject(new Error(`cannot listen on ${opts.host}:${opts.port} (address in use or not available)`));
      else resolve(ls);
    });
  });
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
  const url = `http://${opts.host.includes(":") ? `[${opts.host}]` : opts.host}:${port}`;
  services.docsUrl = (opts.docsUrl ?? url).replace(/\/+$/, "");

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      uWS.us_listen_socket_close(listenSocket);
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, DRAIN_TIMEOUT_MS);
          onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      app.close();
    })();
    return closing;
  };
  return { url, port, close };
}

/** Writes `ctx.response` (plus `ctx.responseHeaders`) unless the client went away. */
function writeResponse(res: HttpResponse, ctx: Ctx): void {
  if (ctx.aborted) return;
  const r = ctx.response!;
  // Unread body bytes would be parsed as the next request: close the connection instead.
  const close = !ctx.bodySource.complete;
  res.cork(() => {
    res.writeStatus(`${r.status} ${STATUS_CODES[r.status] ?? ""}`.trimEnd());
    for (const [k, v] of Object.entries(ctx.responseHeaders)) res.writeHeader(k, v);
    for (const [k, v] of Object.entries(r.headers)) res.writeHeader(k, v);
    if (r.body === undefined) res.endWithoutBody(undefined, close);
    else res.end(r.body, close);
  });
}

/** One line per request: method, route pattern (not raw ids), status, milliseconds, request id. */
function logRequest(logger: Logger, ctx: Ctx): void {
  logger.info(
    {
      req_id: ctx.requestId,
      method: ctx.method,
      route: ctx.route?.def.pattern ?? null,
      status: ctx.aborted ? null : (ctx.response?.status ?? null),
      aborted: ctx.aborted || undefined,
      ms: Math.round((performance.now() - ctx.startedAt) * 10) / 10,
    },
    "request",
  );
}
