/**
 * The `synthd/evaluate` entry: `import { evaluate } from "synthd/evaluate"`.
 *
 * - {@link evaluate} / {@link evaluateWithDetails}: fidelity (1/2/3-way average TVD of the
 *   marginals), column checks, row rules, and with `target` / `holdout` utility (TSTR) and privacy
 *   (DCR, exact copies); {@link independentSample}: the baseline of independent columns.
 * - TSTR's pieces: {@link rocAuc}, {@link rocAucOvr}, {@link fitLogistic} (`./tstr`).
 * - Privacy of synthetic rows (`../privacy`): {@link privacyCheck} (DCR against a holdout) and
 *   the near-copy check ({@link nearCopyCheck}), which needs no holdout.
 *
 * Kept out of the `synthd` entry so that a client that only fits and samples does not load it.
 */
export { evaluate, evaluateWithDetails } from "./evaluate";
export { independentSample } from "./baseline";
export type { EvaluationReport, EvaluationDetails, ColumnReport, ColumnCheck, EvaluateOptions, RuleReport, PairTvd } from "./types";
export { rocAuc, rocAucOvr, fitLogistic } from "./tstr";
export type { LogisticOptions, LogisticModel } from "./tstr";
export { privacyCheck } from "../privacy/dcr";
export type { PrivacyCheck, PrivacyCheckOptions } from "../privacy/dcr";
export type { CopyKeys, ScannedRows } from "../privacy/copies";
export { holdoutNearCopyCheck, nearCopyCheck, nearCopyShare, nearCopyVerdict } from "../privacy/near-copies";
export type { HoldoutNearCopyCheck, NearCopyCheck, NearCopyOptions } from "../privacy/near-copies";
