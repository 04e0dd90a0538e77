/**
 * The destinations' verdict of a chaos run, from what the receiver recorded and what the
 * outbox holds: every finished row accepted (a 2xx answered) at least once, and its latest
 * accepted body (its highest delivery `seq`) with no queued, running or paused cell; every
 * delivery in the outbox delivered and accepted by the receiver at least once, none
 * failed; no delivery id ever arriving with two different bodies (a re-send after a kill
 * or a dropped connection must carry the bytes stored with the delivery); every signature
 * valid. Pure arithmetic, unit-tested.
 */

/** One call the receiver got: the whole body was read before it answered or dropped. */
export interface ReceivedCall {
  /** `Cellflow-Delivery`. */
  id: string;
  /** The body's rowId ("" when the body did not parse). */
  rowId: string;
  bodyHash: string;
  /** Whether the receiver's 2xx answer was written (the sender was still there). */
  accepted: boolean;
  /** Whether the receiver dropped the connection on purpose (the fault it injects). */
  dropped: boolean;
  /** Whether the signature verified against the destination's secret. */
  signed: boolean;
  /** Cells of the body still queued, running or paused (a row sent before it finished). */
  activeCells: number;
}

/** One outbox entry after the run (`destination_deliveries`). */
export interface OutboxEntry {
  id: string;
  rowId: string;
  seq: number;
  status: string;
}

export interface DestinationVerdict {
  rows: number;
  calls: number;
  accepted: number;
  /** Calls the receiver dropped on purpose. */
  dropped: number;
  /** Calls whose sender went away before the answer: cut by a kill (or a sender's timeout). */
  cut: number;
  /** Distinct delivery ids, and those sent more than once. */
  ids: number;
  resentIds: number;
  /** Finished rows never accepted: must be 0. */
  undelivered: number;
  undeliveredSample: string[];
  /** Outbox entries. */
  deliveries: number;
  /** Outbox entries not delivered, or never accepted by the receiver: must be 0. */
  deliveriesNotAccepted: number;
  /** Outbox entries that failed: must be 0. */
  deliveriesFailed: number;
  /** Finished rows whose latest accepted body still has an active cell: must be 0. */
  rowsSentUnfinished: number;
  rowsSentUnfinishedSample: string[];
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
  outbox: readonly OutboxEntry[],
): DestinationVerdict {
  const acceptedCalls = calls.filter((c) => c.accepted);
  const acceptedIds = new Set(acceptedCalls.map((c) => c.id));
  const acceptedRows = new Set(acceptedCalls.map((c) => c.rowId));
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
  const notAccepted = outbox.filter((d) => d.status !== "delivered" || !acceptedIds.has(d.id));
  const failed = outbox.filter((d) => d.status === "failed");
  // A row's latest accepted body: the accepted call of its highest-seq delivery.
  const seqOf = new Map(outbox.map((d) => [d.id, d.seq]));
  const latest = new Map<string, { seq: number; activeCells: number }>();
  for (const c of acceptedCalls) {
    const seq = seqOf.get(c.id) ?? -1;
    const was = latest.get(c.rowId);
    if (!was || seq > was.seq) latest.set(c.rowId, { seq, activeCells: c.activeCells });
  }
  const sentUnfinished = finishedRows.filter((r) => (latest.get(r)?.activeCells ?? 0) > 0);
  const badSignatures = calls.filter((c) => !c.signed).length;
  const dropped = calls.filter((c) => c.dropped).length;
  const problems: string[] = [];
  if (undelivered.length > 0)
    problems.push(
      `${undelivered.length} finished rows never delivered (${undelivered.slice(0, 3).join(", ")})`,
    );
  if (notAccepted.length > 0)
    problems.push(`${notAccepted.length} deliveries not delivered or never accepted`);
  if (failed.length > 0) problems.push(`${failed.length} deliveries failed`);
  if (sentUnfinished.length > 0)
    problems.push(`${sentUnfinished.length} rows whose latest accepted body has an active cell`);
  if (twoBodies.length > 0)
    problems.push(`${twoBodies.length} delivery ids sent with two different bodies`);
  if (badSignatures > 0) problems.push(`${badSignatures} deliveries with a bad signature`);
  return {
    rows: finishedRows.length,
    calls: calls.length,
    accepted: acceptedCalls.length,
    dropped,
    cut: calls.length - acceptedCalls.length - dropped,
    ids: bodies.size,
    resentIds: [...sends.values()].filter((n) => n > 1).length,
    undelivered: undelivered.length,
    undeliveredSample: undelivered.slice(0, 10),
    deliveries: outbox.length,
    deliveriesNotAccepted: notAccepted.length,
    deliveriesFailed: failed.length,
    rowsSentUnfinished: sentUnfinished.length,
    rowsSentUnfinishedSample: sentUnfinished.slice(0, 10),
    idsWithTwoBodies: twoBodies.length,
    idsWithTwoBodiesSample: twoBodies.slice(0, 10),
    badSignatures,
    problems,
  };
}

export function destinationLine(v: DestinationVerdict): string {
  return `${v.rows} rows finished, ${v.undelivered} undelivered, ${v.rowsSentUnfinished} sent unfinished last; ${v.deliveries} deliveries (${v.deliveriesNotAccepted} not accepted, ${v.deliveriesFailed} failed); ${v.calls} calls (${v.accepted} accepted, ${v.dropped} dropped by the receiver, ${v.cut} cut by the kills), ${v.ids} delivery ids (${v.resentIds} re-sent), ${v.idsWithTwoBodies} ids with two bodies, ${v.badSignatures} bad signatures`;
}
