/**
 * `node dist/bench/rare-combinations.js [--seed S] [--top N] [--min P] [--max P]`: how the rare
 * combination of `npm run bench -- seeded` is chosen, without a model.
 *
 * Method: TRAIN = the fidelity bench's split of UCI Adult (`split` of `bench/fidelity.ts`, seed
 * `--seed`, default 0). Candidates: every combination of two or three values of distinct
 * categorical columns (the columns the SDK infers as categorical) whose TRAIN frequency is in
 * [`--min`, `--max`) (default [0.1%, 0.2%): rare, with enough rows to score). Score: the average
 * 1-way plus the average 2-way TVD of the free columns (all columns but the combination's) between
 * the combination's TRAIN rows and all TRAIN rows, by the SDK's `evaluate` with the fidelity
 * bench's binning (`TVD_OPTIONS`): how far the combination's rows are from everyone's, i.e. how
 * much a conditional sample has to move to match them. Prints the `--top` (default 10) highest
 * scores; the first is `DEFAULT_RARE` of `bench/seeded.ts` for seed 0.
 */
import { extractMetadata, type Table } from "../src/sdk";
import { evaluate } from "../src/sdk/evaluate";
import { loadRows, split } from "./fidelity";
import { ADULT_CSV } from "./harness";
import { wherePredicate } from "./seeded";
import { TVD_OPTIONS } from "./tables";

interface Args {
  seed: number;
  top: number;
  min: number;
  max: number;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { seed: 0, top: 10, min: 0.001, max: 0.002 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = Number(argv[++i]);
    if (!Number.isFinite(v)) throw new Error(`${a} needs a number`);
    if (a === "--seed") out.seed = v;
    else if (a === "--top") out.top = v;
    else if (a === "--min") out.min = v;
    else if (a === "--max") out.max = v;
    else throw new Error(`unknown argument ${a}`);
  }
  return out;
}

/** One candidate: its `where`, TRAIN rows and score. */
export interface RareCandidate {
  where: Record<string, string>;
  rows: number;
  tvd1: number;
  tvd2: number;
}

/**
 * The candidates of the module comment, best first.
 * @param train the TRAIN table; `min`, `max` the frequency interval.
 */
export async function rareCandidates(train: Table, min: number, max: number): Promise<RareCandidate[]> {
  const meta = await extractMetadata(train);
  const categorical = train.columns.filter((c) => meta.column_stats?.[c]?.type === "categorical");
  const index = new Map(train.columns.map((c, i) => [c, i]));
  const N = train.rows.length;
  const values = new Map(categorical.map((c) => [c, [...new Set(train.rows.map((r) => r[index.get(c)!]))].sort()]));
  const found: { where: Record<string, string>; rows: number }[] = [];
  const walk = (start: number, where: Record<string, string>, rows: string[][]): void => {
    const k = Object.keys(where).length;
    if (k >= 2 && rows.length >= min * N && rows.length < max * N) found.push({ where: { ...where }, rows: rows.length });
    if (k === 3) return;
    for (let a = start; a < categorical.length; a++) {
      const col = categorical[a];
      const i = index.get(col)!;
      for (const v of values.get(col)!) {
        const sub = rows.filter((r) => r[i] === v);
        if (sub.length >= min * N) walk(a + 1, { ...where, [col]: v }, sub);
      }
    }
  };
  walk(0, {}, train.rows);
  const out: RareCandidate[] = [];
  for (const c of found) {
    const pred = wherePredicate(train.columns, c.where);
    const free = train.columns.filter((col) => !Object.hasOwn(c.where, col));
    const idx = free.map((col) => index.get(col)!);
    const project = (rows: string[][]): Table => ({ columns: free, rows: rows.map((r) => idx.map((i) => r[i])) });
    const r = await evaluate(project(train.rows.filter(pred)), project(train.rows), TVD_OPTIONS);
    out.push({ ...c, tvd1: r.tvd["1"], tvd2: r.tvd["2"] });
  }
  return out.sort((a, b) => b.tvd1 + b.tvd2 - (a.tvd1 + a.tvd2));
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const { train } = split(await loadRows(ADULT_CSV), args.seed);
  const list = await rareCandidates(train, args.min, args.max);
  console.log(`${list.length} combinations with TRAIN frequency in [${100 * args.min}%, ${100 * args.max}%) of ${train.rows.length} rows; by 1-way + 2-way TVD against all TRAIN rows:`);
  for (const c of list.slice(0, args.top)) {
    console.log(`${String(c.rows).padStart(4)} rows  ${c.tvd1.toFixed(4)} + ${c.tvd2.toFixed(4)}  ${JSON.stringify(c.where)}`);
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
