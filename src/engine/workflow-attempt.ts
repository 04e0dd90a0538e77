/**
 * The work of an attempt on a group of kind `workflow`: its definition (the deployed
 * version or the live draft, as the group says), its inputs from the row (a required one
 * missing: `skipped`, with every output blanked), the workspace's secrets only where the
 * workflow can use them, the records of the execution it resumes, and the run itself,
 * whose progress, checkpoints and pause are fenced writes of the attempt. Nothing that
 * leaves here carries a secret's value. An abort is rethrown for the attempt to classify.
 */
import type { Group, WorkflowGroup } from "@/contracts/table";
import { type Block, WorkflowDefinition } from "@/contracts/workflow";
import { groupInputs } from "@/domain/table-schema";
import { LostAuthority } from "@/errors";
import { pickOutput, type RunOutput, runWorkflow } from "@/execution/executor";
import { cellDetails } from "@/execution/finished-blocks";
import { redact } from "@/security/redact";
import { pauseAttempt } from "@/store/cells/pause-attempt";
import { childWorkflow } from "@/store/engine-reads";
import { readExecutionRecords } from "@/store/execution-steps/read";
import { writeCheckpoint } from "@/store/executions/checkpoint";
import { loadSecrets } from "@/store/secrets/read";
import {
  type AttemptRequest,
  type AttemptResult,
  blankOutputs,
  ended,
  failure,
  type OpenAttempt,
  write,
} from "./attempt-outcome";
import { childLineage, sweepLeftChildren } from "./child-lineage";
import type { Engine } from "./handle";

export function groupOutputs(
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

/** Whether a workflow can reach workspace secrets: by name, or through blocks that load more. */
export function needsSecrets(definition: WorkflowDefinition): boolean {
  return definition.blocks.some(
    (b) =>
      b.type === "llm" ||
      b.type === "foreach" ||
      b.type === "workflow" ||
      b.type === "enrichment" ||
      JSON.stringify(b).includes("secrets"),
  );
}

/** The edges a paused block takes when it resumes (approval and wait have plain `next`). */
function nextOf(block: Block | undefined): string[] {
  const next = block?.next;
  if (next === undefined) return [];
  if (typeof next === "string") return [next];
  if (Array.isArray(next)) return next;
  return [];
}

const missing = (v: unknown) => v === undefined || v === null || v === "";

async function definitionFor(
  engine: Engine,
  req: AttemptRequest,
  group: WorkflowGroup,
): Promise<{ ok: true; definition: WorkflowDefinition } | { ok: false; end: AttemptResult }> {
  const found = await engine.definitions.definition(
    engine.locks.db,
    group.workflowId,
    group.version,
    req.step.workflows[group.workflowId],
  );
  if (found.ok) return found;
  return {
    ok: false,
    end: failure(
      found.reason === "not_deployed"
        ? "The workflow has no deployed version; deploy it or set the group to run the live draft"
        : found.reason === "invalid"
          ? "The workflow definition is not valid any more"
          : "The workflow no longer exists",
    ),
  };
}

export async function workflowAttempt(
  engine: Engine,
  req: AttemptRequest,
  run: OpenAttempt,
  group: WorkflowGroup,
): Promise<AttemptResult> {
  const { db, controller, log } = run;
  const found = await definitionFor(engine, req, group);
  if (!found.ok) return found.end;
  const { definition } = found;
  const { executionId, attempt } = req.cell;
  const inputs = groupInputs(group, req.step.data);
  const absent = definition.inputs
    .filter((i) => i.required && missing(inputs[i.name]))
    .map((i) => i.name);
  if (absent.length > 0) {
    return write({
      kind: "complete",
      outcome: "skipped",
      finish: { blockErrors: {}, outputs: blankOutputs(group) },
    });
  }
  // Own properties only (never `row[name] = …`): a name such as `__proto__` must stay a key.
  const row: Record<string, unknown> = Object.fromEntries(
    req.schema.columns.map((c) => [c.name, req.step.data[c.id] ?? null]),
  );
  const ref = { executionId, attempt, tableId: req.tableId, rowId: req.rowId, groupId: group.id };
  // Secrets only where the workflow can use them: a query saved on every other cell.
  run.secrets = needsSecrets(definition) ? await loadSecrets(db, req.step.workspaceId, log) : {};
  // What this execution (and those it resumes) recorded; a fresh one has nothing.
  const records = req.cell.resumable
    ? await readExecutionRecords(db, executionId)
    : { checkpoints: {}, chain: [executionId], scopes: [] };
  // An earlier attempt of this execution died with children running: they ended then.
  if (attempt > 1) await sweepLeftChildren(db, { executionId, attempt }, "before", log);
  const lineage = childLineage(db, ref, {
    secrets: () => run.secrets,
    onLost: () => controller.abort(new LostAuthority("stale")),
    log,
    records,
  });
  run.lineage = lineage;
  const result = await runWorkflow({
    definition,
    inputs,
    row,
    executionId,
    signal: controller.signal,
    secrets: run.secrets,
    checkpoints: records.checkpoints,
    paid: run.paid,
    llm: run.llm,
    lineage,
    children: {
      path: [group.workflowId],
      load: async (id) => {
        const raw = await childWorkflow(db, req.step.workspaceId, id, group.version);
        const parsed = raw === null ? null : WorkflowDefinition.safeParse(raw);
        return parsed?.success ? parsed.data : null;
      },
    },
    hooks: {
      onBlockStart: (id) => run.progress.blockStarted(id),
      onBlockComplete: (id, output) =>
        run.progress.blockFinished(
          id,
          redact(groupOutputs(group, { [id]: output }, id), run.secrets),
        ),
      checkpoint: async (id, checkpoint, charges) => {
        if (!(await writeCheckpoint(db, ref, id, checkpoint, charges)))
          controller.abort(new LostAuthority("stale"));
      },
    },
  });
  await run.progress.close();
  if (controller.signal.aborted) throw controller.signal.reason;
  return workflowEnd(run, ref, definition, result);
}

/** A paused workflow's pause, fenced; a finished one's terminal write. */
async function workflowEnd(
  run: OpenAttempt,
  ref: { executionId: string; attempt: number; tableId: string; rowId: string; groupId: string },
  definition: WorkflowDefinition,
  result: RunOutput,
): Promise<AttemptResult> {
  if (result.paused) {
    const { blockId, pause } = result.paused;
    const block = definition.blocks.find((b) => b.id === blockId);
    const paused = await pauseAttempt(run.db, {
      ...ref,
      pause: {
        blockId,
        reason: pause.reason,
        taken: nextOf(block),
        ...(pause.resumeAt !== undefined ? { resumeAt: pause.resumeAt } : {}),
        ...(pause.output !== undefined ? { output: pause.output } : {}),
      },
    });
    return paused ? { kind: "paused", end: "paused", resumeAt: pause.resumeAt } : ended("stale");
  }
  return write({
    kind: "complete",
    outcome: "ok",
    finish: {
      blockErrors: {},
      outputs: redact(groupOutputs(run.group, result.blocks), run.secrets),
      charges: result.charges,
      ...(result.details ? { details: cellDetails(result.details) } : {}),
    },
  });
}

/** How an attempt that threw (or was aborted) ended. */
