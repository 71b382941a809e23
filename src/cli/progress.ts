/**
 * Progress bars on stderr for `synthd fit` and `synthd sample` (cli-progress). On a terminal the
 * bar redraws in place; when stderr is not a terminal (CI logs, pipes) a line is printed every
 * few seconds instead, so long jobs still show signs of life without flooding the log.
 */
import { SingleBar } from "cli-progress";

/** A bar whose payload fields (e.g. `train_loss`) can be shown in `format` as `{name}`. */
export function progressBar(format: string): SingleBar {
  return new SingleBar({
    format,
    stream: process.stderr,
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
