/**
 * Admission of a paid call (an enrichment, a block's enrichment, a waterfall's step: any
 * source that costs credits): reserve its credits under every cap, or, when the month's
 * credits are used up or its run's credit cap (`maxCredits`) would be passed, halt its
 * run, saying which. Invariant: a call that is not admitted is not made; a halted
 * attempt's cell goes back to un-run; a call over its row's budget (`maxCreditsPerRow`)
 * is refused without a halt (`over_budget`: the caller ends the whole cell so, and the
 * run goes on); an attempt that no longer holds its cell learns it here (`lost`) and
 * makes no call.
 */
import type { Db } from "@db/client";
import type { ChargeKey } from "@/domain/charges";
import type { Plan } from "@/domain/statuses";
import { planLimits } from "@/limits/plans";
import { haltForLimit } from "@/store/dispatches/halt";
import { reserveCredits } from "@/store/usage/reserve";

export interface AdmissionRequest {
  workspaceId: string;
  plan: Plan;
  tableId: string;
  rowId: string;
  groupId: string;
  executionId: string;
  /** The attempt of the execution (its halt hands back only its own cell). */
  attempt: number;
  dispatchId: string | null;
  charge: ChargeKey;
  credits: number;
}

/** How an admission ended: only `admitted` lets the call be made. */
export type Admission = "admitted" | "halted" | "over_budget" | "lost";

export async function admitCall(db: Db, req: AdmissionRequest): Promise<Admission> {
  if (req.credits <= 0) return "admitted";
  const cell = {
    tableId: req.tableId,
    rowId: req.rowId,
    groupId: req.groupId,
    executionId: req.executionId,
    attempt: req.attempt,
  };
  const reservation = await reserveCredits(db, {
    workspaceId: req.workspaceId,
    cell,
    dispatchId: req.dispatchId,
    charge: req.charge,
    credits: req.credits,
    monthlyCredits: planLimits(req.plan).monthlyCredits,
  });
  if (reservation.ok) return "admitted";
  if (reservation.reason === "lost") return "lost";
  if (reservation.reason === "row_budget") return "over_budget";
  await haltForLimit(db, {
    dispatchId: req.dispatchId,
    tableId: req.tableId,
    reason: reservation.reason,
    own: cell,
  });
  return "halted";
}
