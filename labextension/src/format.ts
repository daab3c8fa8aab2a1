/**
 * Plain text formatting for the sidebar: sizes and numbers (the runs word their durations). Pure functions.
 */

/** Bytes as GiB with one decimal: "3.2". */
export function gib(bytes: number): string {
  return (bytes / 1024 ** 3).toFixed(1);
}

/** A metric value with four significant digits, "N/A" when missing. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) {
    return 'N/A';
  }
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e5 || abs < 1e-3)) {
    return value.toExponential(2);
  }
  return Number(value.toPrecision(4)).toString();
}

/** Clamp to [0, 1]; null stays null. */
export function fraction(value: number | null | undefined): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) {
    return null;
  }
  return Math.min(1, Math.max(0, value));
}

/** A whole number with thousands separators, as the Python side writes them: "52,500". */
export function grouped(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** °C of thermal margin in words, as core/thermal.py says it: "6 °C to slowdown". */
export function describeMargin(margin: number): string {
  if (margin >= 0.5) {
    return `${Math.round(margin)} °C to slowdown`;
  }
  if (margin > -0.5) {
    return 'at its slowdown point';
  }
  return `${Math.round(-margin)} °C past slowdown`;
}
