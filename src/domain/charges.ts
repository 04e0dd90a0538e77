/**
 * A charge key: what one paid call is reserved and charged under, once per key whatever
 * the retries, re-drives and resumes of its execution.
 */
export interface ChargeKey {
  /** The execution whose block or step calls (a sub-workflow item's own). */
  chargeId: string;
  /** What is called and where: `<enrichmentId>` (a group) or `<enrichmentId>@<blockId>`. */
  source: string;
}
