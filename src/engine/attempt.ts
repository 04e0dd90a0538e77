/**
 * One attempt: one group on one row, by the carrier holding the row lock. Invariant:
 * every write is fenced by the execution id (claim, progress, terminal); the first write
 * that is rejected ends the attempt at once, and an attempt that ends because of a Stop
 * writes nothing (the tombstone is already there).
 */
import type { Db } from "../../db/client";
import type { Logger } from "../config/log";
import type { Group, TableSchema } from "../contracts/table";
import { formatDuration } from "../domain/durations";
import { pickOutput, runWorkflow, WorkflowError } from "../execution/executor";
import { claimCell } from "../store/cells/claim";
import { failQueuedCell } from "../store/cells/fail-queued";
import { completeCell, failCell } from "../store/cells/finish";
import type { LostReason } from "../store/cells/transition";
import type { CascadeStep } from "../store/engine-reads";
import { CancelledError, registerAttempt } from "./cancellation";
import { definitionOf } from "./definitions";
import { ProgressWriter } from "./progress";

export type AttemptEnd = "completed" | "skipped" | "error" | "cancelled" | LostReason;

function isNamed(value: unknown, name: string): boolean {
  return value instanceof Error && value.name === name;
}

export class DeadlineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DeadlineError";
  }
}

class LostAuthority extends Error {
  constructor(readonly reason: LostReason) {
    super(`the cell is ${reason}`);
    this.name = "LostAuthority";
  }
}

export interface AttemptInput {
  db: Db;
  log: Logger;
  tableId: string;
  rowId: string;
  schema: TableSchema;
  data: Record<string, unknown>;
  groupId: string;
  executionId: string;
  cascadeSignal: AbortSignal;
  attemptTimeoutMs: number;
  workflows: CascadeStep["workflows"];
}

function groupOutputs(
  group: Group,
  blocks: Record<string, unknown>,
  onlyBlock?: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of group.outputs) {
    if (onlyBlock !== undefined && o.from.split(".")[0] !== onlyBlock) continue;
    out[o.columnId] = pickOutput(blocks, o.from);
  }
  return out;
}

const blank = (group: Group) => Object.fromEntries(group.outputs.map((o) => [o.columnId, null]));
const missing = (v: unknown) => v === undefined || v === null || v === "";

export async function runAttempt(a: AttemptInput): Promise<AttemptEnd> {
  const { db, rowId, groupId, executionId } = a;
  const log = a.log.child({ groupId, executionId });
  const group = a.schema.groups.find((g) => g.id === groupId);
  if (!group) {
    await failQueuedCell(
      db,
      rowId,
      groupId,
      executionId,
      "The group was removed from the table before it ran",
    );
    return "error";
  }
  // Registered before the claim: a Stop landing between the claim's commit and the
  // start of the work still finds this attempt and aborts it.
  const controller = new AbortController();
  const unregister = registerAttempt(executionId, controller);
  const claimed = await claimCell(db, rowId, groupId, executionId).catch((err: unknown) => {
    unregister();
    throw err;
  });
  if (!claimed.ok) {
    unregister();
    log.debug({ reason: claimed.reason }, "claim lost");
    return claimed.reason;
  }

  const timer = setTimeout(
    () =>
      controller.abort(new DeadlineError(`Timed out after ${formatDuration(a.attemptTimeoutMs)}`)),
    a.attemptTimeoutMs,
  );
  const onCascadeAbort = () => controller.abort(a.cascadeSignal.reason);
  if (a.cascadeSignal.aborted) onCascadeAbort();
  else a.cascadeSignal.addEventListener("abort", onCascadeAbort, { once: true });

  const progress = new ProgressWriter(db, { rowId, groupId, executionId }, (reason) =>
    controller.abort(new LostAuthority(reason)),
  );
  const fail = async (
    message: string,
    blockErrors: Record<string, string> = {},
  ): Promise<AttemptEnd> => {
    await progress.close();
    const w = await failCell(db, rowId, groupId, executionId, message, { blockErrors });
    return w.ok ? "error" : w.reason;
  };

  try {
    if (group.kind === "enrichment") {
      return await fail(`The enrichment "${group.enrichmentId}" is not available in this version`);
    }
    const found = await definitionOf(
      db,
      group.workflowId,
      group.version,
      a.workflows[group.workflowId],
    );
    if (!found.ok) {
      return await fail(
        found.reason === "not_deployed"
          ? "The workflow has no deployed version; deploy it or set the group to run the live draft"
          : found.reason === "invalid"
            ? "The workflow definition is not valid any more"
            : "The workflow no longer exists",
      );
    }
    const definition = found.definition;

    const inputs: Record<string, unknown> = {};
    for (const [name, columnId] of Object.entries(group.inputs))
      inputs[name] = a.data[columnId] ?? null;
    const absent = definition.inputs
      .filter((i) => i.required && missing(inputs[i.name]))
      .map((i) => i.name);
    if (absent.length > 0) {
      await progress.close();
      const w = await completeCell(db, rowId, groupId, executionId, "skipped", {
        blockErrors: {},
        outputs: blank(group),
      });
      return w.ok ? "skipped" : w.reason;
    }
    const row: Record<string, unknown> = {};
    for (const c of a.schema.columns) row[c.name] = a.data[c.id] ?? null;

    const result = await runWorkflow({
      definition,
      inputs,
      row,
      executionId,
      signal: controller.signal,
      hooks: {
        onBlockStart: (id) => progress.blockStarted(id),
        onBlockComplete: (id, output) =>
          progress.blockFinished(id, groupOutputs(group, { [id]: output }, id)),
      },
    });
    await progress.close();
    if (controller.signal.aborted) throw controller.signal.reason;
    const w = await completeCell(db, rowId, groupId, executionId, "ok", {
      blockErrors: {},
      outputs: groupOutputs(group, result.blocks),
    });
    return w.ok ? "completed" : w.reason;
  } catch (err) {
    await progress.close();
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : err;
    // By name: the web server's bundle has its own copy of these classes, and a Stop
    // issued there aborts attempts registered here.
    if (isNamed(reason, CancelledError.name)) return "cancelled";
    if (reason instanceof LostAuthority) return reason.reason;
    if (isNamed(reason, DeadlineError.name)) return fail((reason as Error).message);
    if (reason instanceof WorkflowError) return fail(reason.message, reason.blockErrors);
    log.error({ err: reason }, "attempt failed unexpectedly");
    return fail(`Internal error: ${reason instanceof Error ? reason.message : String(reason)}`);
  } finally {
    clearTimeout(timer);
    a.cascadeSignal.removeEventListener("abort", onCascadeAbort);
    unregister();
  }
}
