/**
 * The work of an attempt on a group of kind `waterfall`: its steps (enrichments or
 * workflows) tried in order until one's answer is found and passes its `validate`; the
 * winner's answer fills the group's outputs. Invariants: a step after the winner is never
 * called; every step's paid calls go through the attempt's paid-call gate under a charge
 * key that names the step (`<enrichmentId>@step<j>`, a workflow step's blocks
 * `<enrichmentId>@<blockId>@step<j>`), so each is reserved before its call, rate-paced
 * and served by the workspace's result cache like an enrichment group's; the steps that
 * answered with a paid answer (`found` or `rejected`) are charged by the terminal write
 * that records the cell (`Finish.charges`), and what any other step reserved (empty,
 * error, cached, not called) is given back as soon as it ends; a Stop, a halt or the
 * deadline ends the attempt with nothing written (so nothing charged), through the abort
 * the attempt classifies; a step refused by the row's budget ends the cell `over_budget`
 * here, the steps that answered before it charged. A workflow step runs in this attempt, with no checkpoint (a
 * re-drive runs the steps again, and a charged key is never charged twice); one that
 * could pause (approval or wait block: the table's schema check refuses those, but a
 * workflow may be edited later) fails the cell before any step is called. Every output
 * column is written (null blanks it) whatever the end; `details.steps` says what each
 * step did; nothing that leaves here carries a secret's value.
 */
import type { WaterfallGroup, WaterfallStep } from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { canPause, waterfallEnd } from "@/domain/waterfall";
import { isRowBudgetExceeded, type RowBudgetExceeded } from "@/errors";
import { redact, redactText } from "@/security/redact";
import { childWorkflow } from "@/store/engine-reads";
import { loadSecrets } from "@/store/secrets/read";
import {
  type AttemptRequest,
  type AttemptResult,
  blankOutputs,
  failure,
  type OpenAttempt,
  write,
} from "./attempt-outcome";
import { enrichmentStep, type StepEnd, type StepReport, workflowStep } from "./waterfall-steps";

export async function waterfallAttempt(
  req: AttemptRequest,
  run: OpenAttempt,
  group: WaterfallGroup,
): Promise<AttemptResult> {
  const { signal } = run.controller;
  const workflows = await loadStepWorkflows(run, req, group);
  for (const [j, definition] of workflows) {
    if (definition && canPause(definition))
      return failure(
        `Step ${j + 1} of the waterfall runs a workflow with an approval or wait block; a waterfall step cannot pause: remove the block or the step`,
      );
  }
  const secrets = lazySecrets(run, req);
  const reports: StepReport[] = [];
  const charges: ChargeKey[] = [];
  let winner: StepEnd | undefined;
  for (const [j, step] of group.steps.entries()) {
    const n = j + 1;
    if (winner) {
      reports.push({ ...stepIdentity(step, n), status: "not_called", costCredits: 0 });
      continue;
    }
    if (signal.aborted) throw signal.reason;
    run.progress.blockStarted(`step${n}`);
    let end: StepEnd;
    try {
      end =
        "enrichmentId" in step
          ? await enrichmentStep(run, req, group, step, n, secrets)
          : await workflowStep(run, req, group, step, n, workflows.get(j), secrets);
    } catch (err) {
      const reason: unknown = signal.aborted ? signal.reason : err;
      if (!isRowBudgetExceeded(reason)) throw err;
      return overBudget(run, group, { reports, charges, refused: step, n, reason });
    }
    run.progress.blockFinished(`step${n}`, {});
    reports.push(end.report);
    charges.push(...end.charges);
    if (end.report.status === "found") winner = end;
  }
  if (signal.aborted) throw signal.reason;

  const outputs: Record<string, unknown> = {};
  for (const o of group.outputs)
    outputs[o.columnId] = winner ? (winner.answer[o.from] ?? null) : null;
  const outcome = waterfallEnd(
    reports.map((r) => ({ status: r.status, skipped: r.missingInputs !== undefined })),
  );
  const details = redact(
    {
      steps: reports,
      winner: winner ? winner.report.step : null,
      costCredits: reports.reduce((sum, r) => sum + r.costCredits, 0),
    },
    run.secrets,
  );
  if (outcome === "error") {
    const reasons = reports
      .filter((r) => r.status === "error")
      .map((r) => `step ${r.step} (${r.enrichmentId ?? r.workflowId}): ${r.error ?? "failed"}`)
      .join("; ");
    return write({
      kind: "fail",
      message: redactText(`Every step of the waterfall failed — ${reasons}`, run.secrets),
      finish: { blockErrors: {}, outputs, details },
    });
  }
  return write({
    kind: "complete",
    outcome,
    finish: { blockErrors: {}, outputs: redact(outputs, run.secrets), details, charges },
  });
}

/**
 * A step's call would have taken the row past its budget in the run: it was not made, and
 * neither are the steps after it. The cell ends `over_budget`, outputs blank; the steps
 * that answered before it are charged all the same (their providers answered, `rejected`
 * or not), in the terminal write like any waterfall's charges.
 */
function overBudget(
  run: OpenAttempt,
  group: WaterfallGroup,
  at: {
    reports: readonly StepReport[];
    charges: readonly ChargeKey[];
    refused: WaterfallStep;
    n: number;
    reason: RowBudgetExceeded;
  },
): AttemptResult {
  const rest = group.steps
    .slice(at.n)
    .map((step, k) => ({ ...stepIdentity(step, at.n + 1 + k), status: "not_called" as const }));
  const steps: StepReport[] = [
    ...at.reports,
    { ...stepIdentity(at.refused, at.n), status: "not_called", costCredits: 0, overBudget: true },
    ...rest.map((r) => ({ ...r, costCredits: 0 })),
  ];
  return write({
    kind: "complete",
    outcome: "over_budget",
    finish: {
      blockErrors: {},
      outputs: blankOutputs(group),
      details: redact(
        {
          steps,
          winner: null,
          costCredits: at.reports.reduce((sum, r) => sum + r.costCredits, 0),
          overBudget: { source: at.reason.source, costCredits: at.reason.credits },
        },
        run.secrets,
      ),
      charges: [...at.charges],
    },
  });
}

function stepIdentity(
  step: WaterfallStep,
  n: number,
): Pick<StepReport, "step" | "enrichmentId" | "workflowId"> {
  return "enrichmentId" in step
    ? { step: n, enrichmentId: step.enrichmentId }
    : { step: n, workflowId: step.workflowId };
}

/** The workflow steps' definitions, by step index (null: missing or not valid). */
async function loadStepWorkflows(
  run: OpenAttempt,
  req: AttemptRequest,
  group: WaterfallGroup,
): Promise<Map<number, WorkflowDefinition | null>> {
  const out = new Map<number, WorkflowDefinition | null>();
  for (const [j, step] of group.steps.entries()) {
    if (!("workflowId" in step)) continue;
    const raw = await childWorkflow(run.db, req.step.workspaceId, step.workflowId, step.version);
    const parsed = raw === null ? null : WorkflowDefinition.safeParse(raw);
    out.set(j, parsed?.success ? parsed.data : null);
  }
  return out;
}

/** The workspace's secrets, read once and only if a step needs them. */
function lazySecrets(run: OpenAttempt, req: AttemptRequest): () => Promise<Record<string, string>> {
  let loaded: Promise<Record<string, string>> | undefined;
  return () => {
    loaded ??= loadSecrets(run.db, req.step.workspaceId, run.log).then((s) => {
      run.secrets = s;
      return s;
    });
    return loaded;
  };
}
