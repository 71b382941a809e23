/**
 * The HTTP front end: a uWebSockets.js app whose catch-all route hands every request to the
 * pipeline (`pipeline.ts`) and writes its response. uWS rules: what is needed of the
 * stack-allocated `HttpRequest` is copied before any `await`; `onAborted` is attached first and
 * nothing is written after it fires; `onData` is attached synchronously; later writes are corked.
 *
 * Decided here, as they concern the connection (see `respond.ts`): ambiguous body framing gets 400
 * and a close; an answer waits until the body was consumed (`BodySource.drain`), so an uploading
 * client reads it instead of a reset; an un-keyed charge is refunded unless the answer is written
 * to its end.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import uWS, { type HttpRequest, type HttpResponse, type us_listen_socket } from "uWebSockets.js";
import type { Engine } from "../engine/engine";
import { DEFAULT_MAX_MODELS_PER_ORG, newRequestId, type Store } from "../store";
import { relayedPeer, relaySecretDigest, TrustedProxies, type ForwardedHeader } from "./clientAddress";
import type { Ctx, Services } from "./context";
import { errorBody, setErrorResponse, toApiError } from "./errors";
import { upstreamHost, type Http10Listener } from "./http10";
import { spawnHttp10Listener } from "./http10Process";
import { createLogger } from "./log";
import { runPipeline } from "./pipeline";
import { DEFAULT_AUTH_FAILURE_LIMIT, DEFAULT_RATE_LIMIT, MemoryRateLimiter, WINDOW_MS, type RateLimiter } from "./limits/rateLimiter";
import { IDEMPOTENCY_TTL_MS } from "./steps/idempotency";
import { framingError, startBodyRead } from "./steps/readBody";
import { logRequest, refundUndelivered, refuseFraming, writeResponse } from "./respond";

/** Default `maxBodyBytes`: 16 MiB. */
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
  /** Requests per minute of an org without its own limit; default {@link DEFAULT_RATE_LIMIT}. */
  rateLimit?: number;
  /** Failed authentications per minute per client address; default {@link DEFAULT_AUTH_FAILURE_LIMIT} (60). */
  authFailureLimit?: number;
  /** Models one org may keep, both environments; default {@link DEFAULT_MAX_MODELS_PER_ORG}. */
  maxModelsPerOrg?: number;
  /** Proxies (IPs, CIDR ranges) whose forwarding header names the client; default none. */
  trustedProxies?: readonly string[];
  /** The forwarding header the trusted proxies write; default `x-forwarded-for`. */
  forwardedHeader?: ForwardedHeader;
  /** `--http10-port`: also run the HTTP/1.0 listener (`http10.ts`) on this port (0: any free). */
  http10Port?: number;
  /** Current time in Unix milliseconds; default `Date.now` (tests inject one). */
  clock?: () => number;
  /** Shared topology: the Redis limiter, used instead of the in-memory one. */
  sharedLimiter?: RateLimiter;
}

/** A listening server. */
export interface RunningServer {
  /** Base URL, `http://HOST:PORT` (IPv6 hosts in brackets). */
  url: string;
  /** The actual port (useful with `port: 0`). */
  port: number;
  /** `http://HOST:PORT` of the HTTP/1.0 listener, when `http10Port` was given. */
  http10Url?: string;
  /** Stops both listeners, drains up to 10 s, closes the rest (not store or engine). Idempotent. */
  close(): Promise<void>;
}

const DRAIN_TIMEOUT_MS = 10_000;
/** uSockets listen option (exported at run time as `uWS.LIBUS_LISTEN_EXCLUSIVE_PORT`; typed only as an enum). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** How often expired rate counters, idempotency records and tombstones are swept: 10 minutes. */
const SWEEP_INTERVAL_MS = 10 * 60_000;
/** Shared store: how often a front end reconciles the requests of front ends that died: 5 seconds. */
const PEER_RECONCILE_MS = 5_000;
/** How often a failed refund or key release is retried (`Store.reconcile`): 5 seconds. */
const RECONCILE_RETRY_MS = 5_000;

/**
 * The requests in flight per store object, over all servers of this process on it: a second
 * server's reconciliation would otherwise refund a charge the first is about to settle.
 */
const liveByStore = new WeakMap<Store, Set<string>>();

/** The set of requests in flight on `store` in this process, shared by its servers. */
function liveRequestsOf(store: Store): Set<string> {
  let live = liveByStore.get(store);
  if (live === undefined) liveByStore.set(store, (live = new Set()));
  return live;
}

/**
 * Starts the HTTP server, binding the port exclusively, as the only process on an embedded store:
 * loads the rate counters, reconciles what a dead process left in flight, sweeps every 10 min.
 * @throws Error when the address cannot be bound, or a trusted proxy is not an IP or CIDR range.
 */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger();
  const clock = opts.clock ?? Date.now;
  const services: Services = {
    store: opts.store,
    engine: opts.engine,
    logger,
    debug: opts.debug ?? false,
    docsUrl: "",
    maxBodyBytes: opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    clock,
    // Until the counters are loaded below (no request is served before).
    limiter: opts.sharedLimiter ?? new MemoryRateLimiter([], { clock }),
    rateLimit: opts.rateLimit ?? DEFAULT_RATE_LIMIT,
    authFailureLimit: opts.authFailureLimit ?? DEFAULT_AUTH_FAILURE_LIMIT,
    maxModelsPerOrg: opts.maxModelsPerOrg ?? DEFAULT_MAX_MODELS_PER_ORG,
    trustedProxies: TrustedProxies.parse(opts.trustedProxies ?? []),
    forwardedHeader: opts.forwardedHeader ?? "x-forwarded-for",
    live: liveRequestsOf(opts.store),
    reconcileSoon: () => undefined,
  };
  for (const [name, v] of [["rateLimit", services.rateLimit], ["authFailureLimit", services.authFailureLimit], ["maxModelsPerOrg", services.maxModelsPerOrg]] as const) {
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${name} must be an integer >= 1; got ${v}`);
  }
  // Awaited write transaction: earlier writes are committed. Charges and keys not of a live
  // request here were left by a process that died mid-request (nothing sent): release them.
  const rec = await opts.store.reconcile(services.live, clock());
  if (rec.charges > 0 || rec.released > 0) {
    logger.warn({ refunded_rows: rec.refunded_rows, charges: rec.charges, released_keys: rec.released }, "reconciled requests left unfinished by a previous process");
  }
  // A refund or key release that could not be written (full disk) is retried until it is.
  let reconcileTimer: NodeJS.Timeout | undefined;
  services.reconcileSoon = () => {
    if (reconcileTimer !== undefined) return;
    reconcileTimer = setInterval(() => {
      opts.store.reconcile(services.live, clock()).then(
        (r) => {
          clearInterval(reconcileTimer);
          reconcileTimer = undefined;
          logger.warn({ refunded_rows: r.refunded_rows, charges: r.charges, released_keys: r.released }, "reconciled unfinished requests");
        },
        (err: unknown) => logger.error({ err }, "reconciliation failed; retrying"),
      );
    }, RECONCILE_RETRY_MS);
    reconcileTimer.unref();
  };
  // Shared store: a dead front end's charges and keys are reconciled, once its lease lapses, by
  // whichever front end looks next (each charge once: the store locks what it reconciles).
  let peerReconciler: NodeJS.Timeout | undefined;
  if (opts.store.kind === "postgres") {
    peerReconciler = setInterval(() => {
      opts.store.reconcile(services.live, clock()).then(
        (r) => {
          if (r.charges > 0 || r.released > 0) logger.warn({ refunded_rows: r.refunded_rows, charges: r.charges, released_keys: r.released }, "reconciled requests of a front end that died");
        },
        (err: unknown) => logger.warn({ err }, "reconciliation failed; retrying"),
      );
    }, PEER_RECONCILE_MS);
    peerReconciler.unref();
  }
  const memory =
    opts.sharedLimiter === undefined
      ? await MemoryRateLimiter.load(opts.store, clock, (err) => logger.error({ err }, "could not persist a rate counter"))
      : undefined;
  if (memory !== undefined) services.limiter = memory;
  const sweep = async (): Promise<void> => {
    const now = clock();
    memory?.sweep(now);
    await opts.store.sweepRateCounters(Math.floor(now / WINDOW_MS) - 1);
    await opts.store.sweepExpired(now, IDEMPOTENCY_TTL_MS);
  };
  await sweep();
  const sweeper = setInterval(() => {
    sweep().catch((err: unknown) => logger.error({ err }, "sweep of expired records failed"));
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();

  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  const app = uWS.App();
  // The HTTP/1.0 listener's secret: only requests that carry it may name their client address.
  const relaySecret = opts.http10Port === undefined ? undefined : randomBytes(32).toString("base64url");
  const relayDigest = relaySecret === undefined ? undefined : relaySecretDigest(relaySecret);

  app.any("/*", (res: HttpResponse, req: HttpRequest) => {
    let ctx: Ctx | undefined;
    let aborted = false;
    /** Set while a response is being written with delivery tracking ({@link writeResponse}). */
    let onWriteAborted: (() => void) | undefined;
    res.onAborted(() => {
      aborted = true;
      if (ctx === undefined) return;
      ctx.aborted = true;
      ctx.bodySource.abort();
      onWriteAborted?.();
    });
    try {
      // No prototype: a header named `constructor` or `__proto__` is just a header.
      const headers: Record<string, string> = Object.create(null) as Record<string, string>;
      const repeated = new Set<string>();
      req.forEach((k, v) => {
        if (!Object.hasOwn(headers, k)) headers[k] = v;
        else {
          repeated.add(k);
          // A list field sent on several lines is one list, in order (RFC 9110 §5.3): a proxy may append its own line.
          if (k === "x-forwarded-for" || k === "forwarded") headers[k] += `, ${v}`;
        }
      });
      const framing = framingError(headers, repeated);
      if (framing !== undefined) {
        const method = req.getMethod().toUpperCase();
        inFlight++;
        setImmediate(() => {
          if (!aborted) refuseFraming(res, method, framing, services, logger);
          if (--inFlight === 0) onIdle?.();
        });
        return;
      }
      ctx = {
        services,
        method: req.getMethod().toUpperCase(),
        path: req.getUrl(),
        rawQuery: req.getQuery() ?? "",
        headers,
        remoteAddress: relayedPeer(Buffer.from(res.getRemoteAddressAsText()).toString(), headers, relayDigest),
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
      .then(() => c.bodySource.drain())
      .then(() => writeResponse(res, c, (h) => (onWriteAborted = h)))
      .then(async (delivered) => {
        if (!delivered && c.deliveryCharge !== undefined) await refundUndelivered(c, c.deliveryCharge);
      })
      .catch((err: unknown) => logger.error({ err, req_id: c.requestId }, "could not write response"))
      .finally(() => {
        logRequest(logger, c);
        if (--inFlight === 0) onIdle?.();
      });
  });

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    // Exclusive: with SO_REUSEPORT a second server on the port would silently take half the
    // connections. The (host, port, options, cb) form is in the binding but not its typings.
    const listen = app.listen as unknown as (
      host: string,
      port: number,
      options: number,
      cb: (ls: us_listen_socket | false) => void,
    ) => void;
    listen.call(app, opts.host, opts.port, LIBUS_LISTEN_EXCLUSIVE_PORT, (ls) => {
      if (ls !== false) return resolve(ls);
      clearInterval(sweeper);
      if (peerReconciler !== undefined) clearInterval(peerReconciler);
      reject(new Error(`cannot listen on ${opts.host}:${opts.port} (address in use or not available)`));
    });
  });
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
  const url = `http://${opts.host.includes(":") ? `[${opts.host}]` : opts.host}:${port}`;
  services.docsUrl = (opts.docsUrl ?? url).replace(/\/+$/, "");
  let http10: Http10Listener | undefined;
  if (opts.http10Port !== undefined) {
    try {
      http10 = await spawnHttp10Listener({
        host: opts.host,
        port: opts.http10Port,
        upstream: { host: upstreamHost(opts.host), port },
        secret: relaySecret!,
        docsUrl: services.docsUrl,
        logger,
        maxBodyBytes: services.maxBodyBytes,
      });
    } catch (err) {
      clearInterval(sweeper);
      if (peerReconciler !== undefined) clearInterval(peerReconciler);
      uWS.us_listen_socket_close(listenSocket);
      app.close();
      throw err;
    }
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(sweeper);
      if (peerReconciler !== undefined) clearInterval(peerReconciler);
      if (reconcileTimer !== undefined) clearInterval(reconcileTimer);
      uWS.us_listen_socket_close(listenSocket);
      // Its requests in flight still reach this server, so the app closes only after them.
      const http10Drained = http10?.close(DRAIN_TIMEOUT_MS);
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, DRAIN_TIMEOUT_MS);
          onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      await http10Drained;
      app.close();
    })();
    return closing;
  };
  return { url, port, ...(http10 === undefined ? {} : { http10Url: http10.url }), close };
}
