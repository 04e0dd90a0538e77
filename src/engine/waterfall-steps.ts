/**
 * One step of a waterfall: an enrichment's call or a workflow's run, through the
 * attempt's paid-call gate under a key that names the step, and what it ended as.
 * Invariants: what a step reserved and did not earn (empty, error, cached, not called) is
 * given back before it returns; a paid answer (`found` or `rejected`) comes back with its
 * charge keys, for the terminal write to settle; an abort (a Stop, a halt, the row's
 * budget, the deadline) is rethrown once what the step reserved is given back; a workflow
 * step that pauses is an error (a waterfall step cannot pause).
 */
import type { WaterfallGroup, WaterfallStep } from "@/contracts/table";
import { WorkflowDefinition } from "@/contracts/workflow";
import type { ChargeKey } from "@/domain/charges";
import { groupInputs } from "@/domain/table-schema";
import { judgeAnswer, type WaterfallStepStatus } from "@/domain/waterfall";
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
import { redactText } from "@/security/redact";
import { childWorkflow } from "@/store/engine-reads";
import type { AttemptRequest, OpenAttempt } from "./attempt-outcome";

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
  /** Not called because its call would have taken the row past its budget in the run. */
  overBudget?: true;
  cached?: true;
  ageMs?: number;
  error?: string;
  providers?: ProviderReport[];
}

/** One step's end: its report, its answer by output name, and the charges it brings. */
export interface StepEnd {
  report: StepReport;
  answer: Record<string, unknown>;
  charges: ChargeKey[];
}

export const stepSource = (source: string, step: number) => `${source}@step${step}`;

/** The answer by output name: each of the step's outputs read from what it returned. */
function answerOf(step: WaterfallStep, read: (path: string) => unknown): Record<string, unknown> {
  const answer: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(step.outputs)) answer[name] = read(path) ?? null;
  return answer;
}

export async function enrichmentStep(
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

export async function workflowStep(
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
