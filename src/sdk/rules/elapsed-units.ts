/**
 * Units and rounding of the elapsed-time rule (`ElapsedRule`): the number a rule writes for two
 * instants, and how far a written number may be from it. Shared by the checker (`./check`), the
 * enforcer (`./elapsed`), detection (`./detect/elapsed`) and the rule's text (`./describe`).
 */
import type { ElapsedRule } from "../../contract";

/** Seconds per unit a detected rule may count in, with its name: the clock's units and three years. */
export const ELAPSED_UNITS: readonly { seconds: number; name: string }[] = [
  { seconds: 86_400, name: "days" },
  { seconds: 31_557_600, name: "years of 365.25 days" },
  { seconds: 31_536_000, name: "years of 365 days" },
  { seconds: 31_556_952, name: "years of 365.2425 days" },
  { seconds: 604_800, name: "weeks" },
  { seconds: 3_600, name: "hours" },
  { seconds: 60, name: "minutes" },
  { seconds: 1, name: "seconds" },
];

/** The unit's name (`days`), else its seconds (`units of 90 s`). */
export function elapsedUnitName(seconds: number): string {
  return ELAPSED_UNITS.find((u) => u.seconds === seconds)?.name ?? `units of ${seconds} s`;
}

/**
 * The number the rule writes for `later - earlier` seconds: counted in `unit`, then rounded to
 * `decimals` (to the nearest, half away from zero, or down for `floor`). A relative hair of
 * slack before rounding down keeps a whole count (`730.5 d / 365.25 d`) from falling to the unit below.
 */
export function elapsedValue(rule: Pick<ElapsedRule, "unit" | "rounding">, decimals: number, later: number, earlier: number): number {
  const x = (later - earlier) / rule.unit;
  const scale = 10 ** decimals;
  if (rule.rounding === "floor") return Math.floor(x * scale + 1e-9 * Math.max(1, Math.abs(x * scale))) / scale;
  return (Math.sign(x) * Math.round(Math.abs(x) * scale)) / scale;
}

/**
 * True when number `x`, written with `written` decimals, is the elapsed time counted at the
 * rule's decimals and written without trailing zeros (`32.6027397` for 32.60273970): it equals the
 * count rounded to the decimals it is written with, at most the rule's, within a relative hair
 * for binary floating point.
 */
export function elapsedKeeps(rule: Pick<ElapsedRule, "unit" | "rounding" | "decimals">, x: number, written: number, later: number, earlier: number): boolean {
  const want = elapsedValue(rule, Math.min(written, rule.decimals), later, earlier);
  return Math.abs(x - want) <= 1e-12 * Math.max(1, Math.abs(want));
}
