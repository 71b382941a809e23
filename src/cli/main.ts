#!/usr/bin/env node
/**
 * The `synthd` command line: `serve`, `keys create`, `fit`, `sample` (with `--where` or
 * `--seed-data` for seeded generation; CSV, Parquet or Arrow output), `impute`, `models`,
 * `evaluate`, `report`. Client commands read SYNTHD_URL and SYNTHD_API_KEY (`--url`, `--key`).
 * Scripts and benchmarks call it, so its commands, options and outputs are a contract
 * (`docs/decisions.md` "The command line is a contract").
 *
 * Exit codes: 0 success; 1 a failure explained in one sentence on stderr (bad input file, an API
 * error, a failed model); 2 wrong usage (commander's own message).
 */
import { Command, InvalidArgumentError, Option } from "commander";
import { OUTPUT_EXTENSIONS, OUTPUT_FORMATS } from "../sdk/io/format-names";
import { DEFAULT_MAX_QUEUED_PER_ORG, DEFAULT_MAX_TRAINING_PER_ORG } from "../engine/admission/defaults";
import { DEFAULT_MAX_MODELS_PER_ORG } from "../store/records";
import { FORWARDED_HEADERS } from "../server/forwarded-headers";
import { reportAndExit } from "./output";
import { registerUsageCommands } from "./usage";
import { databaseOption } from "./admin-store";
import { registerReportCommand } from "./report-command";

// The commands' implementations load when one of them runs, not when the program is defined: a
// client command does not load the server, the store and the engine, and `--help` loads neither.
// What the definitions need (defaults, choices) comes from modules that load nothing heavy; the
// option parsers load theirs when the option is given.

/**
 * Commander's action for the function `name` of the module `load` returns, loading the module when
 * the command runs: `lazy(sampleCommands, "sampleCommand")`.
 */
function lazy<M, K extends keyof M>(load: () => M, name: K): M[K] {
  return ((...args: unknown[]) => (load()[name] as (...a: unknown[]) => unknown)(...args)) as M[K];
}

/** `./server-commands` (server, store, engine), loaded for `serve`, `worker`, `migrate`, `keys`. */
function serverCommands(): typeof import("./server-commands") {
  return require("./server-commands");
}

/** `./commands/fit` (the SDK's metadata extraction and client), loaded when `fit` runs. */
function fitCommands(): typeof import("./commands/fit") {
  return require("./commands/fit");
}

/** `./commands/sample` (the SDK's generation and file writers), loaded for `sample` or `impute`. */
function sampleCommands(): typeof import("./commands/sample") {
  return require("./commands/sample");
}

/** `./commands/models` (the SDK client), loaded when `models ls|get|rm` runs. */
function modelsCommands(): typeof import("./commands/models") {
  return require("./commands/models");
}

/** `./commands/evaluate` (the SDK's evaluation), loaded when `evaluate` runs. */
function evaluateCommands(): typeof import("./commands/evaluate") {
  return require("./commands/evaluate");
}

function int(name: string, min: number): (v: string) => number {
  return (v) => {
    if (!/^-?\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) {
      throw new InvalidArgumentError(`${name} must be an integer >= ${min}.`);
    }
    return Number(v);
  };
}

function float(name: string): (v: string) => number {
  return (v) => {
    const x = Number(v);
    if (v.trim() === "" || !Number.isFinite(x)) throw new InvalidArgumentError(`${name} must be a number.`);
    return x;
  };
}

/** `--delimiter`: one character; `tab` and `\t` name the tab. */
function delimiterArg(v: string): string {
  const d = v === "tab" || v === "\\t" ? "\t" : v;
  if ([...d].length !== 1) throw new InvalidArgumentError(`--delimiter must be one character (or "tab"), got ${JSON.stringify(v)}.`);
  return d;
}

function positive(name: string): (v: string) => number {
  return (v) => {
    const x = Number(v);
    if (v.trim() === "" || !Number.isFinite(x) || x <= 0) throw new InvalidArgumentError(`${name} must be a number > 0.`);
    return x;
  };
}

function byteSize(name: string): (v: string) => number {
  return (v) => {
    try {
      return (require("../engine/admission/budget") as typeof import("../engine/admission/budget")).parseByteSize(v);
    } catch {
      throw new InvalidArgumentError(`${name} must be bytes or a size with a unit (512MiB, 6GiB, 8GB) or a share of the machine's memory (60%).`);
    }
  };
}

/**
 * `--trusted-proxy`: collects every occurrence (each may be a comma list) into one list, checked
 * with `TrustedProxies.parse` so that a bad entry is a usage error (exit 2) naming it.
 */
function trustedProxyList(v: string, previous: string[] | undefined): string[] {
  try {
    (require("../server/clientAddress") as typeof import("../server/clientAddress")).TrustedProxies.parse(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message.replace(/^--trusted-proxy: /, ""));
  }
  return [...(previous ?? []), v];
}

/** `--format` of `sample` and `impute`: wins over `-o`'s extension (see `outputFormat`). */
function formatOption(): Option {
  return new Option("--format <format>", "output format; wins over -o's extension (default: by -o's extension, else csv)").choices(OUTPUT_FORMATS);
}

/** `-o`'s help: each format's extensions, from the table `formatOfPath` reads. */
function outputHelp(extra: string): string {
  const byFormat = OUTPUT_FORMATS.map((f) => Object.keys(OUTPUT_EXTENSIONS).filter((e) => OUTPUT_EXTENSIONS[e] === f).join(", "));
  return `output file, format by extension: ${byFormat.join("; ")} (${extra})`;
}

/** `serve --help`'s list of the environment variables it reads besides its options' own. */
const SERVE_ENVIRONMENT = `
Environment (besides the options' own):
  SYNTHD_RATE_LIMIT      default requests per minute per organization (60); synthd orgs set overrides it per organization
  SYNTHD_DOCS_URL        base of error.doc_url in error responses (default: this server's own URL)
  SYNTHD_INTERNAL_TOKEN  shared topology: the secret front ends send to workers (the same on every worker)`;

/** `fit --help`'s and `sample --help`'s environment variable besides the options' own. */
const FILTER_ENVIRONMENT = `
Environment (besides the options' own):
  SYNTHD_FILTER_DIR  where synthd fit keeps near-copy filters for synthd sample (default $XDG_DATA_HOME/synthd/near-copy-filters, else ~/.local/share/synthd/near-copy-filters)`;

/** Builds the program; exported so tests can drive it without a child process. */
export function buildProgram(): Command {
  const program = new Command("synthd")
    .description("Self-hosted synthetic tabular data: serve, fit, sample, evaluate.")
    .showHelpAfterError()
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

  const clientOpts = (c: Command): Command =>
    c
      .addOption(new Option("--url <url>", "server base URL").env("SYNTHD_URL").default("http://127.0.0.1:8080"))
      .addOption(new Option("--key <key>", "API key").env("SYNTHD_API_KEY"));

  program
    .command("serve")
    .description("start the HTTP server with its embedded LMDB store")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .addOption(new Option("--port <port>", "port (0 = any free port)").env("SYNTHD_PORT").default(8080).argParser(int("--port", 0)))
    .addOption(new Option("--data-dir <dir>", "store directory").env("SYNTHD_DATA_DIR").default("./synthd-data"))
    .option("--workers <n>", "engine worker threads (default: one per core)", int("--workers", 1))
    .addOption(
      new Option("--compute <kind>", "training and generation: the C++ core or tfjs (default: native when the addon loads)").choices([
        "native",
        "tfjs",
      ]),
    )
    .addOption(
      new Option("--memory-budget <size>", "memory the whole process may use; training is admitted against it (default: 50% of the machine's)")
        .env("SYNTHD_MEMORY_BUDGET")
        .argParser(byteSize("--memory-budget")),
    )
    .option("--max-training-per-org <n>", "models one organization trains at once", int("--max-training-per-org", 1), DEFAULT_MAX_TRAINING_PER_ORG)
    .option("--max-queued-per-org <n>", "models one organization may have waiting to train (more creates get 429 rate_limit_exceeded)", int("--max-queued-per-org", 0), DEFAULT_MAX_QUEUED_PER_ORG)
    .option("--max-models-per-org <n>", "models one organization may keep, sandbox and live together (more creates get 402 quota_exceeded)", int("--max-models-per-org", 1), DEFAULT_MAX_MODELS_PER_ORG)
    .option("--debug", "include internal error messages in 500 responses", false)
    .addOption(new Option("--database <url>", "shared topology: PostgreSQL URL of the shared store (with --redis)").env("SYNTHD_DATABASE_URL"))
    .addOption(new Option("--redis <url>", "shared topology: Redis URL (rate limits, training queue, workers)").env("SYNTHD_REDIS_URL"))
    .addOption(new Option("--prefix <prefix>", "shared topology: Redis key prefix of the deployment").env("SYNTHD_PREFIX").default("synthd"))
    .addOption(
      new Option(
        "--trusted-proxy <address>",
        "IP address or CIDR range (or a comma list) of a proxy whose forwarding header names the client address; repeatable (default: none, the peer's address counts)",
      )
        .env("SYNTHD_TRUSTED_PROXIES")
        .argParser(trustedProxyList),
    )
    .addOption(
      new Option("--forwarded-header <name>", "the forwarding header the trusted proxies write")
        .choices(FORWARDED_HEADERS)
        .env("SYNTHD_FORWARDED_HEADER")
        .default("x-forwarded-for"),
    )
    .addOption(
      new Option(
        "--http10-port <port>",
        "also serve HTTP/1.0 clients (nginx's default upstream protocol, ab) on this port of --host, forwarded to --port (0 = any free port; default: none)",
      )
        .env("SYNTHD_HTTP10_PORT")
        .argParser(int("--http10-port", 0)),
    )
    .addHelpText("after", SERVE_ENVIRONMENT)
    .action(lazy(serverCommands, "serveCommand"));

  program
    .command("worker")
    .description("shared topology: a training and generation worker on PostgreSQL and Redis (see docs/deploy.md)")
    .addOption(new Option("--database <url>", "PostgreSQL URL of the shared store").env("SYNTHD_DATABASE_URL").makeOptionMandatory())
    .addOption(new Option("--redis <url>", "Redis URL").env("SYNTHD_REDIS_URL").makeOptionMandatory())
    .addOption(new Option("--prefix <prefix>", "Redis key prefix of the deployment").env("SYNTHD_PREFIX").default("synthd"))
    .option("--host <host>", "address of the internal generate port; one other machines can reach needs SYNTHD_INTERNAL_TOKEN", "127.0.0.1")
    .addOption(new Option("--port <port>", "internal generate port (0 = any free port)").default(0).argParser(int("--port", 0)))
    .option("--advertise-url <url>", "URL front ends use to reach this worker (default http://HOST:PORT)")
    .option("--workers <n>", "engine worker threads (default: one per core)", int("--workers", 1))
    .addOption(new Option("--compute <kind>", "training and generation: the C++ core or tfjs").choices(["native", "tfjs"]))
    .addOption(
      new Option("--memory-budget <size>", "memory this process may use; training is admitted against it (default: 50% of the machine's)")
        .env("SYNTHD_MEMORY_BUDGET")
        .argParser(byteSize("--memory-budget")),
    )
    .option("--concurrency <n>", "training jobs held at once (they queue for memory in the engine)", int("--concurrency", 1), 16)
    .option("--lock-duration <ms>", "a dead worker's training is taken over after about this long", int("--lock-duration", 1000), 10_000)
    .addOption(
      new Option("--shutdown-timeout <ms>", "after SIGTERM, exit (status 1) after this long even if Redis or PostgreSQL hold the shutdown up")
        .env("SYNTHD_SHUTDOWN_TIMEOUT")
        .default(30_000)
        .argParser(int("--shutdown-timeout", 100)),
    )
    .option("--debug", "debug-level logs", false)
    .addHelpText("after", "\nEnvironment (besides the options' own):\n  SYNTHD_INTERNAL_TOKEN  the secret front ends send to workers (the same on every front end)")
    .action(lazy(serverCommands, "workerCommand"));

  program
    .command("migrate")
    .description("create or upgrade the shared store's schema in PostgreSQL (servers and workers also do it at start)")
    .addOption(new Option("--database <url>", "PostgreSQL URL").env("SYNTHD_DATABASE_URL").makeOptionMandatory())
    .action(lazy(serverCommands, "migrateCommand"));

  const keys = program.command("keys").description("manage API keys (works while the server runs)");
  keys
    .command("create")
    .description("create an API key and print it alone on stdout; only its SHA-256 is stored")
    .addOption(new Option("--data-dir <dir>", "store directory").env("SYNTHD_DATA_DIR").default("./synthd-data"))
    .requiredOption("--org <name>", "organization (created if missing)")
    .addOption(new Option("--env <env>", "environment").choices(["test", "live"]).default("test"))
    .addOption(databaseOption())
    .action(lazy(serverCommands, "keysCreateCommand"));

  clientOpts(
    program
      .command("fit")
      .description("extract metadata from a table, create a model, wait for training; prints the model id last")
      .argument(
        "<file>",
        "the table: CSV (with a header row), .csv.gz/.tsv.gz, .jsonl/.ndjson, .json (an array of records), .parquet, .arrow/.feather, or a postgres:// URI with --table or --query; or a directory of one CSV or Parquet file per table (a database; optional metadata.json in SDV's format), or a postgres:// URI alone (every table of a schema, keys from the catalog)",
      )
      .addOption(new Option("--format <format>", "the file's format instead of its extension's").choices(["csv", "csv.gz", "jsonl", "json", "parquet", "arrow"]))
      .option("--table <name>", "PostgreSQL: the table (or schema.table) to read")
      .option("--query <sql>", "PostgreSQL: the SELECT to read, instead of --table")
      .option("--schema <name>", "PostgreSQL database (no --table/--query): the schema whose tables are read (default: the URI's ?schema=, else public)")
      .option("--config <json>", "training config as JSON, e.g. '{\"model_size\":\"small\"}'")
      .option("--no-wait", "return right after the model is created")
      .option("--pair-budget <cells>", "most 2-way marginal cells to send", int("--pair-budget", 0))
      .option(
        "--columns <json|file>",
        "column kinds instead of the inferred ones, JSON or a JSON file: {\"col\": {\"type\": \"categorical|numerical|datetime|id\", \"format\": \"yyyyMMdd\"}}; an id's semantic kind: {\"col\": {\"type\": \"id\", \"semantic\": \"email\"}}",
      )
      .option("--rare-threshold <k>", "rows a categorical value needs to appear in synthetic data (default 2; 5 under 160 rows)", int("--rare-threshold", 1))
      .option("--domain <file>", "the CSV is already discretized: JSON {column: K}, integer codes 0..K-1 (Private-PGM format)")
      .option("--epsilon <e>", "differential privacy: measure the marginals with Gaussian noise (zCDP, MST); needs --domain", positive("--epsilon"))
      .option("--delta <d>", "delta of (epsilon, delta)-DP, in (0, 1) (default 1e-9)", float("--delta"))
      .option("--delimiter <char>", "field delimiter: ',', ';', '|', 'tab' or '\\t' (default: detected from the first lines)", delimiterArg)
      .option("--encoding <label>", "text encoding of the CSV, e.g. latin1, windows-1252, utf-16le (default utf-8)")
      .option(
        "--rules <json|file>",
        "row rules, JSON or a JSON file: {\"drop\": [\"inequality:end,start\"], \"declare\": [{\"type\": \"not_equal\", \"columns\": [\"a\", \"b\"]}], \"detect\": false}",
      ),
  )
    .addHelpText("after", FILTER_ENVIRONMENT)
    .action(lazy(fitCommands, "fitCommand"));

  clientOpts(
    program
      .command("sample")
      .description("generate rows from a model and write them as CSV, Parquet or Arrow (CSV on stdout without -o)")
      .argument("<model_id>")
      .option("-n, --num-rows <n>", "rows to generate (not with --seed-data)", int("-n", 1))
      .option("-o, --output <file>", outputHelp("written whole or not at all"))
      .option("--scale <x>", "database (db_... from synthd fit DIR): root tables' rows as a multiple of the real ones, children follow (default 1); -o is then a directory or a postgres:// URI", positive("--scale"))
      .option("--schema <name>", "database written to -o postgres://...: the schema its tables are created in (default: the URI's ?schema=, else public)")
      .option("--rows <table=n>", "database: a table's rows instead of the scaled count (a child's spread over its parents); repeat per table", (v: string, prev: string[] = []) => [...prev, v])
      .addOption(formatOption())
      .option("--seed <s>", "seed: the same seed gives the same rows", int("--seed", 0))
      .option("--temperature <t>", "sampling temperature (> 0)", float("--temperature"))
      .option("--top-p <p>", "nucleus sampling threshold in [0, 1] (0: the most probable code)", float("--top-p"))
      .option("--calibrate", "rake a pool of twice the rows to the model's marginals (default unless the metadata is private)")
      .option("--no-calibrate", "plain draw: faster, further from the marginals")
      .option(
        "--where <json|file>",
        "only rows satisfying this condition, JSON or a JSON file: {\"sex\": \"Female\", \"age\": {\"gte\": 60}, \"race\": [\"White\", \"Black\"]}",
      )
      .option("--seed-data <file>", "seed CSV: one output row per seed row, its non-blank cells kept, blank cells generated")
      .option("--real <file>", "the CSV the model was fitted on: build the near-copy filter from it instead of the one synthd fit kept on this machine")
      .option("--no-filter", "keep rows equal to a real row on all columns but one (near-copies); by default the filter synthd fit kept on this machine drops them"),
  )
    .addHelpText("after", FILTER_ENVIRONMENT)
    .action(lazy(sampleCommands, "sampleCommand"));

  clientOpts(
    program
      .command("impute")
      .description("fill the blank cells of a CSV from a model (one output row per input row; non-blank cells kept byte for byte)")
      .argument("<model_id>")
      .argument("<file>", "CSV with a header row; its columns must be columns of the model")
      .option("-o, --output <file>", outputHelp("written whole or not at all; stdout without -o"))
      .addOption(formatOption())
      .option("--seed <s>", "seed: the same seed gives the same rows", int("--seed", 0))
      .option("--temperature <t>", "sampling temperature (> 0)", float("--temperature"))
      .option("--top-p <p>", "nucleus sampling threshold in [0, 1] for the generated cells", float("--top-p"))
      .option("--calibrate", "draw from the calibrated model's conditional (default unless the metadata is private)")
      .option("--no-calibrate", "draw from the model's own conditional: faster, further from the marginals"),
  ).action(lazy(sampleCommands, "imputeCommand"));

  const models = program.command("models").description("list, show and delete models");
  clientOpts(models.command("ls").description("list models, newest first")).action(lazy(modelsCommands, "modelsListCommand"));
  clientOpts(models.command("get").description("show one model").argument("<model_id>")).action(lazy(modelsCommands, "modelsGetCommand"));
  clientOpts(models.command("rm").description("delete a model").argument("<model_id>")).action(lazy(modelsCommands, "modelsRemoveCommand"));

  program
    .command("evaluate")
    .description("average total variation distance of 1-, 2- and 3-way marginals between two CSVs")
    .argument("<real>", "the real CSV")
    .argument("<synthetic>", "the synthetic CSV")
    .option("--json", "print JSON instead of tables", false)
    .option("--domain <file>", "both CSVs are discretized codes with this domain (JSON {column: K})")
    .option("--target <column>", "TSTR: train logistic regression on the synthetic rows to predict this column; ROC AUC")
    .option("--positive <value>", "TSTR: the target value counted as positive (default: the less frequent of its two most frequent values)")
    .option("--multiclass", "TSTR: predict every class of the target, one-vs-rest; macro ROC AUC (not with --positive)")
    .option("--holdout <file>", "real rows the model never saw: TSTR test set and the privacy check (DCR, exact copies)")
    .option("--metadata <json|file>", "the model's metadata (JSON of GET /v1/models/{id}/metadata): share of real and synthetic rows keeping each of its row rules")
    .option("--seed <s>", "seed of the classifier and the privacy check's samples", int("--seed", 0))
    .action(lazy(evaluateCommands, "evaluateCommand"));

  registerReportCommand(program, int("--seed", 0));
  registerUsageCommands(program);
  return program;
}

if (require.main === module) {
  buildProgram().parseAsync(process.argv).catch(reportAndExit);
}
