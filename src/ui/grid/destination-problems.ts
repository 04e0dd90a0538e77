/**
 * How the Destinations dialog shows a destination's recent problems: its deliveries with a
 * lastError (failed, or pending and being retried), newest first, as the server filters
 * them (`?withError=true`).
 */
import type { DeliveryView } from "@/contracts/destinations";

export const PROBLEMS_SHOWN = 5;

/** One line for a problem: "failed · HTTP 404" or "retrying (3 tries) · timed out …". */
export function problemLine(d: DeliveryView): string {
  const what =
    d.status === "failed"
      ? "failed"
      : `retrying (${d.attempts} ${d.attempts === 1 ? "try" : "tries"})`;
  return `${what} · ${d.lastError ?? "no answer"}`;
}
