/**
 * Progress bars on stderr for `synthd fit` and `synthd sample` (cli-progress). On a terminal the
 * bar redraws in place; when stderr is not a terminal (CI logs, pipes) a line is printed every
 * few seconds instead, so long jobs still show signs of life without flooding the log, and a line
 * equal to the one before it (cli-progress draws the bar again when it stops) is left out.
 */
import { SingleBar } from "cli-progress";

/** The stream cli-progress writes to: what its terminal wrapper uses of a stream. */
type BarStream = NodeJS.WritableStream & { isTTY?: boolean };

/**
 * A non-terminal stream for a bar: passes each line on once, leaving out empty lines and a line
 * equal to the last one written (cli-progress writes a line's text, then its newline, separately).
 */
export function distinctLines(out: NodeJS.WritableStream): BarStream {
  let line = "";
  let last: string | undefined;
  const write = (chunk: string | Uint8Array): boolean => {
    line += chunk.toString();
    let nl: number;
    while ((nl = line.indexOf("\n")) >= 0) {
      const text = line.slice(0, nl);
      line = line.slice(nl + 1);
      if (text !== "" && text !== last) {
        out.write(`${text}\n`);
        last = text;
      }
    }
    return true;
  };
  return { isTTY: false, write } as unknown as BarStream;
}

/**
 * A bar whose payload fields (e.g. `train_loss`) can be shown in `format` as `{name}`, on
 * `stream` (default stderr; see the module comment for non-terminals).
 */
export function progressBar(format: string, stream: NodeJS.WriteStream | NodeJS.WritableStream = process.stderr): SingleBar {
  const tty = (stream as { isTTY?: boolean }).isTTY === true;
  return new SingleBar({
    format,
    stream: tty ? stream : distinctLines(stream),
    hideCursor: true,
    clearOnComplete: false,
    noTTYOutput: true,
    notTTYSchedule: 5000,
    etaBuffer: 20,
  });
}

/** Formats a loss for a bar: 4 significant digits, `-` while unknown (null). */
export function fmtLoss(x: number | null | undefined): string {
  return x === null || x === undefined ? "-" : x.toPrecision(4);
}

/** Extraction's bar, fed the readers' progress (`ReadProgress` of `../sdk/io/inputs`). */
export interface ReadingBar {
  update(p: { rows: number; fraction?: number }): void;
  stop(): void;
}

/**
 * `synthd fit`'s bar while it reads the table: rows, rows/s and, when the share read is known
 * (files), the bar and the time left. A read that starts again (a second pass) restarts it.
 */
export function readingBar(name: string, stream: NodeJS.WriteStream | NodeJS.WritableStream = process.stderr): ReadingBar {
  let bar: SingleBar | undefined;
  // From the bar's making (the first batch may be a whole row group), then from each new pass.
  let started: number | undefined = Date.now();
  let last = 0;
  const PARTS = 1000;
  return {
    update(p) {
      const now = Date.now();
      if (bar === undefined || p.rows < last) {
        if (bar !== undefined || started === undefined) started = now;
        bar?.stop();
        bar = progressBar(
          p.fraction === undefined
            ? `reading ${name} | {rows} rows | {rate} rows/s`
            : `reading |{bar}| {percentage}% | {rows} rows | {rate} rows/s | {left} left`,
          stream,
        );
        bar.start(p.fraction === undefined ? 1 : PARTS, 0, { rows: 0, rate: "-", left: "-" });
      }
      last = p.rows;
      const seconds = (now - started!) / 1000;
      const f = p.fraction ?? 0;
      const payload = {
        rows: p.rows.toLocaleString("en-US"),
        rate: seconds > 0 ? Math.round(p.rows / seconds).toLocaleString("en-US") : "-",
        left: f >= 1 ? "0s" : f > 0 && seconds > 0 ? timeLeft((seconds * (1 - f)) / f) : "-",
      };
      bar.update(p.fraction === undefined ? 0 : Math.round(p.fraction * PARTS), payload);
    },
    stop() {
      bar?.stop();
      bar = undefined;
      started = undefined;
      last = 0;
    },
  };
}

/** Seconds as `42s`, `3m 05s` or `1h 02m` for the time left of a bar. */
export function timeLeft(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
