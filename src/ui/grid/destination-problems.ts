/**
 * What the Destinations dialog shows as a destination's recent problems: its failed
 * deliveries and the pending ones being retried (those with a lastError), newest first.
 */
import type { DeliveryView } from "@/contracts/destinations";

export const PROBLEMS_SHOWN = 5;

export function recentProblems(
  failed: readonly DeliveryView[],
  pending: readonly DeliveryView[],
  limit = PROBLEMS_SHOWN,
): DeliveryView[] {
  return [...failed, ...pending.filter((d) => d.lastError !== null)]
    .sort((a, b) =>
      a.createdAt === b.createdAt
        ? b.id.localeCompare(a.id)
        : b.createdAt.localeCompare(a.createdAt),
    )
    .slice(0, limit);
}

/** One line for a problem: "failed · HTTP 404" or "retrying (3 tries) · timed out …". */
export function problemLine(d: DeliveryView): string {
  const what =
    d.status === "failed"
      ? "failed"
      : `retrying (${d.attempts} ${d.attempts === 1 ? "try" : "tries"})`;
  return `${what} · ${d.lastError ?? "no answer"}`;
}
