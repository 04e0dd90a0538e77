/** How the System page writes its figures. */

/** `42s`, `3m 05s`, `2h 10m`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** A latency: `120 ms` under a second, else `2.5 s`; `—` when there is none. */
export function latency(seconds: number | null): string {
  if (seconds === null) return "—";
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(1)} s`;
}

/** Cells per second with the precision a glance needs. */
export function rate(cellsPerSecond: number): string {
  if (cellsPerSecond === 0) return "0 cells/s";
  return `${cellsPerSecond < 10 ? cellsPerSecond.toFixed(1) : Math.round(cellsPerSecond)} cells/s`;
}

/** Credits to 1/1000, without trailing zeros. */
export function credits(n: number): string {
  return n.toLocaleString(undefined, { maximumFractionDigits: 3 });
}

/** `12s ago` for an ISO time, read at `now`. */
export function ago(iso: string | null, now: number): string {
  if (iso === null) return "—";
  return `${duration((now - Date.parse(iso)) / 1000)} ago`;
}
