/**
 * A charge key: what one paid call is reserved and charged under, once per key whatever
 * the retries, re-drives and resumes of its execution.
 */
export interface ChargeKey {
  /** The execution whose block or step calls (a sub-workflow item's own). */
  chargeId: string;
  /**
   * What is called and where: `<enrichmentId>` (a group), `<enrichmentId>@<blockId>`, or
   * `llm:<model>@<blockId>` (`#repair` after it for a schema-repair call).
   */
  source: string;
  /**
   * What to charge, in milli-credits, when it is not what was reserved: an llm call is
   * reserved at its estimate (input tokens plus the output cap) and charged its real usage.
   * Absent: the reservation is charged as it is.
   */
  milli?: number;
}
