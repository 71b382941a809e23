/**
 * The `synthd/report` entry: `import { writeReport } from "synthd/report"`.
 *
 * {@link buildReport} / {@link writeReport}: `evaluate`'s figures as one self-contained HTML
 * quality report (`./report`; docs/report.md). Kept out of the `synthd` entry: it loads the
 * evaluation and the chart renderer (vega).
 */
export { buildReport, writeReport } from "./report";
export type { ReportOptions, QualityReport } from "./report";
