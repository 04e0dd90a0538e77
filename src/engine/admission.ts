/**
 * Admission of a paid attempt (an enrichment, or any source that costs credits): charge
 * it once, or, when the month's credits are used up or its run's credit cap
 * (`maxCredits`) would be passed, halt its run, saying which. Invariant: an attempt that
 * is not admitted calls no provider, and its cell goes back to un-run.
 */
import type { Db } from "@db/client";
import type { Plan } from "@/domain/statuses";
import { planLimits } from "@/limits/plans";
import { haltForLimit } from "@/store/dispatches/halt";
import { admit } from "@/store/usage/admit";

export interface AdmissionRequest {
  workspaceId: string;
  plan: Plan;
  tableId: string;
  rowId: string;
  groupId: string;
  executionId: string;
  /** The attempt of the execution (its halt hands back only its own cell). */
  attempt: number;
  /** The ledger's key with `source`; default `executionId` (a sub-workflow item has its own). */
  chargeId?: string;
  dispatchId: string | null;
  /** What is charged: an enrichment id, a provider id… (one charge per execution and source). */
  source: string;
  credits: number;
}

export async function admitAttempt(db: Db, req: AdmissionRequest): Promise<"admitted" | "halted"> {
  if (req.credits <= 0) return "admitted";
  const admission = await admit(db, {
    workspaceId: req.workspaceId,
    executionId: req.chargeId ?? req.executionId,
    source: req.source,
    credits: req.credits,
    monthlyCredits: planLimits(req.plan).monthlyCredits,
    dispatchId: req.dispatchId,
  });
  if (admission.ok) return "admitted";
  await haltForLimit(db, {
    dispatchId: req.dispatchId,
    tableId: req.tableId,
    reason: admission.reason,
    own: {
      rowId: req.rowId,
      groupId: req.groupId,
      executionId: req.executionId,
      attempt: req.attempt,
    },
  });
  return "halted";
}
