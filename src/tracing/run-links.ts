/**
 * What a carrier's trace links to: the span of the run that handed its row out, from the
 * `traceparent` the run kept on its dispatch row (src/engine/dispatcher.ts), so the link
 * holds across processes and on trigger.dev. A carrier starts its own trace rather than
 * joining the run's: a run of a million rows is a million small traces, not one huge one.
 * A run's context never changes, so a process reads it once per run (a bounded memo of
 * values that cannot go stale); with tracing off nothing is read or kept.
 */
import { type Link, parseTraceparent, tracingOn } from "./spans";

const NO_LINKS: Link[] = [];
/** Runs remembered per process; past it the memo starts over (a read per run again). */
const MEMO_RUNS = 10_000;
const memo = new Map<string, Link[]>();

export async function runLinks(
  dispatchId: string | undefined,
  readTraceContext: (dispatchId: string) => Promise<string | null>,
): Promise<Link[]> {
  if (!dispatchId || !tracingOn()) return NO_LINKS;
  const known = memo.get(dispatchId);
  if (known) return known;
  const context = parseTraceparent(await readTraceContext(dispatchId));
  const links = context ? [{ context, attributes: { "cellflow.run.id": dispatchId } }] : NO_LINKS;
  if (memo.size >= MEMO_RUNS) memo.clear();
  memo.set(dispatchId, links);
  return links;
}
