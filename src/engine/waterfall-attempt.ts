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
 * the attempt classifies. A workflow step runs in this attempt, with no checkpoint (a
 * re-drive runs the steps again, and a charged key is never charged twice); one that
 * could pause (approval or wait block: the table's schema check refuses those, but a
 * workflow may be edited later) fails the cell before any step is called. Every output
 * column is written (null blanks it) whatever the end; `details.steps` says what each
 * step did; nothing that leaves here carries a secret's value.
 */
import type { WaterfallGroup, WaterfallStep } from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { groupInputs } from "@/domain/table-schema";
import { canPause, judgeAnswer, type WaterfallStepStatus, waterfallEnd } from "@/domain/waterfall";
import { getEnrichment } from "@/enrichments/registry";
import { runEnrichment } from "@/enrichments/run";
import {
  type CallGate,
  EnrichmentError,
  isPaidAnswer,
  type PaidCalls,
  type ProviderReport,
} from "@/enrichments/types";
import { pickOutput, runWorkflow, WorkflowError } from "@/execution/executor";
import { redact, redactText } from "@/security/redact";
import { childWorkflow } from "@/store/engine-reads";
import { loadSecrets } from "@/store/secrets/read";
import {
  type AttemptRequest,
  type AttemptResult,
  failure,
  type OpenAttempt,
  write,
} from "./attempt-outcome";

/** What one step did, as the cell's `details.steps` shows it. */
export interface StepReport {
  /** 1-based, as people count steps. */
  step: number;
  enrichmentId?: string;
  workflowId?: string;
  status: WaterfallStepStatus;
  costCredits: number;
  /** Not called because a required input was empty. */
  missingInputs?: string[];
  cached?: true;
  ageMs?: number;
  error?: string;
  providers?: ProviderReport[];
}

/** One step's end: its report, its answer by output name, and the charges it brings. */
interface StepEnd {
  report: StepReport;
  answer: Record<string, unknown>;
  charges: ChargeKey[];
}

const stepSource = (source: string, step: number) => `${source}@step${step}`;

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
    const end =
      "enrichmentId" in step
        ? await enrichmentStep(run, req, group, step, n, secrets)
        : await workflowStep(run, req, group, step, n, workflows.get(j), secrets);
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

/** The answer by output name: each of the step's outputs read from what it returned. */
function answerOf(step: WaterfallStep, read: (path: string) => unknown): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(step.outputs)) answer[name] = read(path) ?? null;
  return answer;
}

async function enrichmentStep(
  run: OpenAttempt,
  req: AttemptRequest,
  group: WaterfallGroup,
  step: Extract<WaterfallStep, { enrichmentId: string }>,
  n: number,
  secretsOf: () => Promise<Record<string, string>>,
): Promise<StepEnd> {
  const id = { step: n, enrichmentId: step.enrichmentId };
  const enrichment = getEnrichment(step.enrichmentId);
  if (!enrichment) {
    const error = `the enrichment "${step.enrichmentId}" does not exist`;
    return { report: { ...id, status: "error", costCredits: 0, error }, answer: {}, charges: [] };
  }
  const secrets = enrichment.needsSecrets ? await secretsOf() : {};
  const gate = run.paid({
    source: stepSource(enrichment.id, n),
    chargeId: req.cell.executionId,
    credits: enrichment.cost,
  });
  const { signal } = run.controller;
  let result: Awaited<ReturnType<typeof runEnrichment>>;
  try {
    result = await runEnrichment(enrichment, groupInputs(step, req.step.data), {
      signal,
      secrets,
      ...gate,
    });
  } catch (err) {
    await gate.release();
    if (signal.aborted) throw signal.reason;
    if (!(err instanceof EnrichmentError)) throw err;
    return {
      report: {
        ...id,
        status: "error",
        costCredits: 0,
        error: redactText(err.message, secrets),
        providers: err.details.providers,
      },
      answer: {},
      charges: [],
    };
  }
  if (signal.aborted) {
    await gate.release();
    throw signal.reason;
  }
  const common = {
    ...id,
    providers: result.details.providers,
    ...(result.details.cached ? { cached: true as const, ageMs: result.details.ageMs ?? 0 } : {}),
  };
  if (result.outcome === "skipped") {
    await gate.release();
    const missingInputs = result.details.missingInputs ?? [];
    return {
      report: { ...common, status: "not_called", costCredits: 0, missingInputs },
      answer: {},
      charges: [],
    };
  }
  const answer = answerOf(step, (path) => result.outputs[path]);
  const status =
    result.outcome === "ok" ? judgeAnswer(answer, step.validate, group.outputs[0]?.from) : "empty";
  // A provider's answer is charged, kept or not (`rejected` too); anything else gives back.
  const paid = isPaidAnswer(result) && status !== "empty";
  if (!paid) await gate.release();
  return {
    report: { ...common, status, costCredits: paid ? enrichment.cost : 0 },
    answer,
    charges: paid ? [gate.charge] : [],
  };
}

/**
 * The step's own gate over the attempt's: every paid block's key names the step, and
 * what the step reserved can be given back at once when its answer is not kept.
 */
function stepGate(paid: PaidCalls, n: number) {
  const opened: { gate: CallGate; credits: number }[] = [];
  const calls: PaidCalls = (c) => {
    const gate = paid({ ...c, source: stepSource(c.source, n) });
    opened.push({ gate, credits: c.credits });
    return gate;
  };
  return {
    calls,
    releaseAll: () => Promise.all(opened.map((o) => o.gate.release())).then(() => undefined),
    creditsOf: (charges: readonly ChargeKey[]) =>
      opened
        .filter((o) =>
          charges.some(
            (c) => c.chargeId === o.gate.charge.chargeId && c.source === o.gate.charge.source,
          ),
        )
        .reduce((sum, o) => sum + o.credits, 0),
  };
}

async function workflowStep(
  run: OpenAttempt,
  req: AttemptRequest,
  group: WaterfallGroup,
  step: Extract<WaterfallStep, { workflowId: string }>,
  n: number,
  definition: WorkflowDefinition | null | undefined,
  secretsOf: () => Promise<Record<string, string>>,
): Promise<StepEnd> {
  const id = { step: n, workflowId: step.workflowId };
  const failed = (error: string): StepEnd => ({
    report: { ...id, status: "error", costCredits: 0, error },
    answer: {},
    charges: [],
  });
  if (!definition)
    return failed(
      step.version === "deployed"
        ? "the workflow has no deployed version (or is not valid)"
        : "the workflow does not exist (or is not valid)",
    );
  const inputs = groupInputs(step, req.step.data);
  const missingInputs = definition.inputs
    .filter((i) => i.required && isBlank(inputs[i.name]))
    .map((i) => i.name);
  if (missingInputs.length > 0)
    return {
      report: { ...id, status: "not_called", costCredits: 0, missingInputs },
      answer: {},
      charges: [],
    };
  const secrets = await secretsOf();
  const row: Record<string, unknown> = Object.fromEntries(
    req.schema.columns.map((c) => [c.name, req.step.data[c.id] ?? null]),
  );
  const gate = stepGate(run.paid, n);
  const { signal } = run.controller;
  try {
    const result = await runWorkflow({
      definition,
      inputs,
      row,
      executionId: req.cell.executionId,
      signal,
      secrets,
      paid: gate.calls,
      children: {
        path: [step.workflowId],
        load: async (childId) => {
          const raw = await childWorkflow(run.db, req.step.workspaceId, childId, step.version);
          const parsed = raw === null ? null : WorkflowDefinition.safeParse(raw);
          return parsed?.success ? parsed.data : null;
        },
      },
    });
    if (signal.aborted) throw signal.reason;
    if (result.paused) {
      await gate.releaseAll();
      return failed("the workflow paused (approval or wait): a waterfall step cannot pause");
    }
    const answer = answerOf(step, (path) => pickOutput(result.blocks, path));
    const status = judgeAnswer(answer, step.validate, group.outputs[0]?.from);
    const charges = status === "empty" ? [] : result.charges;
    if (charges.length === 0) await gate.releaseAll();
    return {
      report: { ...id, status, costCredits: gate.creditsOf(charges) },
      answer,
      charges,
    };
  } catch (err) {
    await gate.releaseAll();
    if (signal.aborted) throw signal.reason;
    if (!(err instanceof WorkflowError)) throw err;
    return failed(redactText(err.message, secrets));
  }
}

const isBlank = (v: unknown) => v === undefined || v === null || v === "";
