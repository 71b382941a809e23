/**
 * `synthd report REAL.csv SYNTH.csv [--holdout H.csv] [--target COL] [--domain F] -o report.html`:
 * the quality report (`../sdk/report`; docs/report.md), one self-contained HTML file. Takes
 * `evaluate`'s options, so its figures are those of `synthd evaluate --json` for the same files.
 */
import type { Command } from "commander";

/** `../sdk/report` (the evaluation, the charts and the SDK), loaded when `report` runs. */
function sdkReport(): typeof import("../sdk/report") {
  return require("../sdk/report");
}

/** `./commands/shared` (for `readMetadataArg`), loaded when `report` runs. */
function sharedCommands(): typeof import("./commands/shared") {
  return require("./commands/shared");
}

/** Options of `synthd report`. */
export interface ReportCommandOptions {
  /** `-o FILE.html`: where to write the report (written whole or not at all). */
  output: string;
  /** `--holdout FILE`: real rows the model never saw (reference, TSTR test set, privacy check). */
  holdout?: string;
  /** `--target COL` and `--positive VALUE`: TSTR. */
  target?: string;
  positive?: string;
  /** `--domain FILE`: both tables are discretized codes. */
  domain?: string;
  /** `--metadata JSON|FILE`: the model's metadata, whose row rules the summary checks. */
  metadata?: string;
  seed?: number;
  title?: string;
}

/** Writes the report and prints one line (file, size, time) on stderr. */
export async function reportCommand(real: string, synthetic: string, opts: ReportCommandOptions): Promise<void> {
  const { writeReport } = sdkReport();
  const { readMetadataArg } = sharedCommands();
  const t0 = Date.now();
  const r = await writeReport(real, synthetic, opts.output, {
    ...(opts.holdout !== undefined ? { holdout: opts.holdout } : {}),
    ...(opts.target !== undefined ? { target: opts.target } : {}),
    ...(opts.positive !== undefined ? { positive: opts.positive } : {}),
    ...(opts.domain !== undefined ? { domain: opts.domain } : {}),
    ...(opts.metadata !== undefined ? { metadata: readMetadataArg(opts.metadata) } : {}),
    ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    ...(opts.title !== undefined ? { title: opts.title } : {}),
  });
  const kib = Math.round(Buffer.byteLength(r.html) / 1024);
  process.stderr.write(`wrote ${opts.output} (${kib} KiB, ${r.charts} charts) in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}

/**
 * Adds `report` to the program.
 * @param seedParser the integer parser `main.ts` uses for `--seed`.
 */
export function registerReportCommand(program: Command, seedParser: (v: string) => number): void {
  program
    .command("report")
    .description("write the quality report: one self-contained HTML file with the figures of evaluate and their pictures")
    .argument("<real>", "the real CSV (the generator's TRAIN rows)")
    .argument("<synthetic>", "the synthetic CSV")
    .requiredOption("-o, --output <file>", "the HTML file to write")
    .option("--holdout <file>", "real rows the model never saw: the HOLDOUT reference, TSTR test set and privacy check")
    .option("--target <column>", "TSTR: train logistic regression on the synthetic rows to predict this column; ROC AUC")
    .option("--positive <value>", "TSTR: the target value counted as positive (default: its rarest value)")
    .option("--domain <file>", "both CSVs are discretized codes with this domain (JSON {column: K})")
    .option("--metadata <json|file>", "the model's metadata (JSON of GET /v1/models/{id}/metadata): its row rules head the summary")
    .option("--seed <s>", "seed of the classifier and the privacy check's samples", seedParser)
    .option("--title <text>", "heading of the report")
    .action(reportCommand);
}
