/** Entry point of the HTTP/1.0 listener's child process (`http10Process.ts`). */
import pino from "pino";
import { REDACT_PATHS } from "./log";
import { startHttp10Listener, type Http10Listener } from "./http10";
import type { FromHttp10Child, ToHttp10Child } from "./http10Process";

/** After the channel closed, how long the listener has to close before the process exits anyway. */
const ORPHAN_EXIT_MS = 2_000;

const send = (m: FromHttp10Child): void => {
  if (process.connected) process.send?.(m);
};

let listener: Http10Listener | undefined;

// The server's process drains this one; a signal to the whole process group must not cut it short.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => {});
process.on("disconnect", () => {
  setTimeout(() => process.exit(0), ORPHAN_EXIT_MS).unref();
  void (listener?.close(0) ?? Promise.resolve()).then(() => process.exit(0));
});

process.on("message", (m: ToHttp10Child) => {
  if (m.type === "start") {
    const logger = pino(
      { name: "synthd", level: m.options.logLevel, redact: { paths: REDACT_PATHS } },
      { write: (line: string) => send({ type: "log", line }) },
    );
    const { logLevel: _level, ...options } = m.options;
    startHttp10Listener({ ...options, logger }).then(
      (l) => {
        listener = l;
        send({ type: "listening", port: l.port, url: l.url });
      },
      (err: unknown) => send({ type: "failed", message: err instanceof Error ? err.message : String(err) }),
    );
  } else if (m.type === "close") {
    void (listener?.close(m.timeoutMs) ?? Promise.resolve()).then(() => process.exit(0));
  }
});
