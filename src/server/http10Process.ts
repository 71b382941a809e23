/**
 * The HTTP/1.0 listener (`http10.ts`) in a child process, so its connections and the main
 * listener's draw on two descriptor tables: an idle flood on one port (uWS has no connection cap)
 * cannot starve the other. Logs go to the server's logger over IPC; the child exits with the
 * server, ignores the terminal's signals (the server drains it) and is restarted if it dies.
 */
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { Logger } from "pino";
import type { Http10Listener, Http10ListenerOptions } from "./http10";

/** What the child is started with: the listener's options, a log level for its logger instead of the logger. */
export type Http10ChildOptions = Omit<Http10ListenerOptions, "logger"> & { logLevel: string };

/** Messages from the server to the child. */
export type ToHttp10Child = { type: "start"; options: Http10ChildOptions } | { type: "close"; timeoutMs: number };

/** Messages from the child to the server. */
export type FromHttp10Child =
  | { type: "listening"; port: number; url: string }
  | { type: "failed"; message: string }
  | { type: "log"; line: string };

/** Seconds before a child that died is started again. */
const RESTART_DELAY_MS = 1_000;
/** After the drain's own time, how long the child has to exit before it is killed. */
const EXIT_GRACE_MS = 2_000;
/** pino's fields that the server's logger writes itself. */
const PINO_OWN_FIELDS = new Set(["level", "time", "pid", "hostname", "name", "msg", "v"]);

/** Passes one JSON log line of the child to `logger` at its level, keeping its fields. */
function relayLogLine(logger: Logger, line: string): void {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  const label = logger.levels.labels[Number(record.level)] ?? "info";
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (!PINO_OWN_FIELDS.has(k)) fields[k] = v;
  const write = (logger as unknown as Record<string, (o: object, m?: string) => void>)[label];
  write?.call(logger, fields, typeof record.msg === "string" ? record.msg : undefined);
}

/** Forks the child and waits for its `listening` (or `failed`) message. */
function startChild(opts: Http10ChildOptions, logger: Logger): Promise<{ child: ChildProcess; port: number; url: string }> {
  const child = fork(path.join(__dirname, "http10Child.js"), [], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    serialization: "json",
  });
  child.on("message", (m: FromHttp10Child) => {
    if (m.type === "log") relayLogLine(logger, m.line);
  });
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null, signal: string | null): void =>
      reject(new Error(`the HTTP/1.0 listener's process exited before listening (code ${code}, signal ${signal})`));
    child.once("exit", onExit);
    child.once("error", reject);
    child.on("message", (m: FromHttp10Child) => {
      if (m.type === "listening") {
        child.off("exit", onExit);
        resolve({ child, port: m.port, url: m.url });
      } else if (m.type === "failed") {
        child.off("exit", onExit);
        child.kill("SIGKILL");
        reject(new Error(m.message));
      }
    });
    child.send({ type: "start", options: opts } satisfies ToHttp10Child);
  });
}

/**
 * Starts the HTTP/1.0 listener in a child process; options and handle as `startHttp10Listener`.
 * `close` drains it and waits for its exit (killed {@link EXIT_GRACE_MS} after `timeoutMs`).
 * @throws Error when the address cannot be bound or the child cannot start.
 */
export async function spawnHttp10Listener(opts: Http10ListenerOptions): Promise<Http10Listener> {
  const { logger, ...rest } = opts;
  const childOpts: Http10ChildOptions = { ...rest, logLevel: logger.level };
  const first = await startChild(childOpts, logger);
  const { port, url } = first;
  let child = first.child;
  let closing = false;

  const watch = (c: ChildProcess): void => {
    c.once("exit", (code, signal) => {
      if (closing) return;
      logger.error({ listener: "http10", code, signal }, "HTTP/1.0 listener's process died; starting it again");
      setTimeout(() => {
        if (closing) return;
        startChild({ ...childOpts, port }, logger).then(
          (started) => {
            if (closing) {
              started.child.kill("SIGKILL");
              return;
            }
            child = started.child;
            watch(child);
          },
          (err: unknown) => logger.error({ err, listener: "http10" }, "HTTP/1.0 listener could not be started again"),
        );
      }, RESTART_DELAY_MS).unref();
    });
  };
  watch(child);

  let closed: Promise<void> | undefined;
  const close = (timeoutMs: number): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      const c = child;
      if (c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => c.once("exit", () => resolve()));
      const killer = setTimeout(() => c.kill("SIGKILL"), timeoutMs + EXIT_GRACE_MS);
      try {
        if (c.connected) c.send({ type: "close", timeoutMs } satisfies ToHttp10Child);
        else c.kill("SIGKILL");
        await exited;
      } finally {
        clearTimeout(killer);
      }
    })();
    return closed;
  };
  return { url, port, close };
}
