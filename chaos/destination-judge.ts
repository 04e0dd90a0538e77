/**
 * The destinations' verdict of a chaos run, from what the receiver recorded: every row
 * that finished must have been accepted (a 2xx answered) at least once, and no delivery
 * id may ever arrive with two different bodies (a re-send after a kill or a dropped
 * connection must carry the bytes stored with the delivery). Pure arithmetic, unit-tested.
 */

/** One call the receiver got: the whole body was read before it answered or dropped. */
export interface ReceivedCall {
  /** `Cellflow-Delivery`. */
  id: string;
  /** The body's rowId ("" when the body did not parse). */
  rowId: string;
  bodyHash: string;
  /** Whether the receiver answered 2xx (a dropped or refused call is not accepted). */
  accepted: boolean;
  /** Whether the signature verified against the destination's secret. */
  signed: boolean;
}

export interface DestinationVerdict {
  rows: number;
  calls: number;
  accepted: number;
  /** Calls the receiver dropped or refused. */
  refused: number;
  /** Distinct delivery ids, and those sent more than once. */
  ids: number;
  resentIds: number;
  /** Finished rows never accepted: must be 0. */
  undelivered: number;
  undeliveredSample: string[];
  /** Delivery ids seen with more than one body: must be 0. */
  idsWithTwoBodies: number;
  idsWithTwoBodiesSample: string[];
  /** Calls whose signature did not verify: must be 0. */
  badSignatures: number;
  problems: string[];
}

export function judgeDestination(
  finishedRows: readonly string[],
  calls: readonly ReceivedCall[],
): DestinationVerdict {
  const acceptedRows = new Set(calls.filter((c) => c.accepted).map((c) => c.rowId));
  const undelivered = finishedRows.filter((r) => !acceptedRows.has(r));
  const bodies = new Map<string, Set<string>>();
  const sends = new Map<string, number>();
  for (const c of calls) {
    const set = bodies.get(c.id) ?? new Set<string>();
    set.add(c.bodyHash);
    bodies.set(c.id, set);
    sends.set(c.id, (sends.get(c.id) ?? 0) + 1);
  }
  const twoBodies = [...bodies].filter(([, s]) => s.size > 1).map(([id]) => id);
  const accepted = calls.filter((c) => c.accepted).length;
  const badSignatures = calls.filter((c) => !c.signed).length;
  const problems: string[] = [];
  if (undelivered.length > 0)
    problems.push(
      `${undelivered.length} finished rows never delivered (${undelivered.slice(0, 3).join(", ")})`,
    );
  if (twoBodies.length > 0)
    problems.push(`${twoBodies.length} delivery ids sent with two different bodies`);
  if (badSignatures > 0) problems.push(`${badSignatures} deliveries with a bad signature`);
  return {
    rows: finishedRows.length,
    calls: calls.length,
    accepted,
    refused: calls.length - accepted,
    ids: bodies.size,
    resentIds: [...sends.values()].filter((n) => n > 1).length,
    undelivered: undelivered.length,
    undeliveredSample: undelivered.slice(0, 10),
    idsWithTwoBodies: twoBodies.length,
    idsWithTwoBodiesSample: twoBodies.slice(0, 10),
    badSignatures,
    problems,
  };
}

export function destinationLine(v: DestinationVerdict): string {
  return `${v.rows} rows finished, ${v.undelivered} undelivered; ${v.calls} calls (${v.accepted} accepted, ${v.refused} dropped), ${v.ids} delivery ids (${v.resentIds} re-sent), ${v.idsWithTwoBodies} ids with two bodies, ${v.badSignatures} bad signatures`;
}
