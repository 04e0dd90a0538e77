/**
 * `POST /api/workflows/:id/test`: runs a workflow once, now, on given inputs or on a row,
 * and answers what each block did. Invariants: no cell, row or execution record is
 * written (the only writes are the test's credit entries, store/usage/*-test-*.ts, and
 * what the blocks themselves do outside: http calls are made); nothing in the answer
 * carries a secret's value (outputs and errors are redacted as a cell's are); the run ends
 * at its first pause, at its time cap (CELLFLOW_TEST_RUN_TIMEOUT_MS) or when the client
 * leaves, and then nothing of it runs on; whatever it reserved is charged or given back
 * before the answer (see engine/test-run-gate.ts). Every paid answer a finished block
 * holds is charged, the client there or not: its effects ran (a later block may have sent
 * it out), so leaving before the answer must not make it free.
 */
import { readEnv } from "@/config/env";
import type {
  TestBlockReport,
  TestWorkflowRequest,
  TestWorkflowResponse,
} from "@/contracts/workflow-test";
import type { Failure } from "@/domain/errors";
import { newId } from "@/domain/ids";
import type { Result } from "@/domain/result";
import { testRunGate } from "@/engine/test-run-gate";
import { groupOutputs, needsSecrets } from "@/engine/workflow-attempt";
import { DeadlineError, UsageLimitHalt } from "@/errors";
import { leafOutput, type RunOutput, runWorkflow, WorkflowError } from "@/execution/executor";
import { requestRateLines } from "@/runtime/request-limiter";
import { redact, redactText } from "@/security/redact";
import { loadSecrets } from "@/store/secrets/read";
import type { ServiceContext } from "./context";
import { type TestSetup, testSetup } from "./workflow-test-setup";

interface BlockTrace {
  id: string;
  startedAt: number;
  status: TestBlockReport["status"] | "running";
  output: unknown;
  error: string | null;
  durationMs: number;
}

/** What each block of the run did, in the order they started (kept by the run's hooks). */
class Traces {
  private readonly traces = new Map<string, BlockTrace>();

  start(id: string): void {
    const trace = { id, startedAt: Date.now(), status: "running" as const, output: null };
    this.traces.set(id, { ...trace, error: null, durationMs: 0 });
  }

  finish(id: string, patch: Partial<BlockTrace>): void {
    const t = this.traces.get(id);
    if (t) Object.assign(t, { durationMs: Date.now() - t.startedAt }, patch);
  }

  /** The outputs of the blocks that finished, by id (as the executor keeps them). */
  finished(): Record<string, unknown> {
    const done = [...this.traces.values()].filter((t) => t.status === "completed");
    return Object.fromEntries(done.map((t) => [t.id, t.output]));
  }

  /** Redacted; a block still running when the run ended is `cancelled`, with why it ended. */
  reports(secrets: Record<string, string>, cutShort: string | null): TestBlockReport[] {
    return [...this.traces.values()].map((t): TestBlockReport => {
      const running = t.status === "running";
      const error = running ? cutShort : t.error;
      return {
        id: t.id,
        status: t.status === "running" ? "cancelled" : t.status,
        output: redact(t.output ?? null, secrets) as TestBlockReport["output"],
        error: error && redactText(error, secrets),
        durationMs: running ? Date.now() - t.startedAt : t.durationMs,
      };
    });
  }
}

/** Why the run was cut short (not a block's failure): the time cap or the month's credits. */
function cutMessage(reason: unknown): string {
  if (reason instanceof DeadlineError) return reason.message;
  if (reason instanceof UsageLimitHalt)
    return "the month's credits are used up: the paid call was not made (GET /api/usage)";
  return reason instanceof Error ? reason.message : String(reason);
}

const empty = (v: unknown) => v === undefined || v === null || v === "";

export async function testWorkflow(
  ctx: ServiceContext,
  workflowId: string,
  req: TestWorkflowRequest,
  clientSignal: AbortSignal,
): Promise<Result<TestWorkflowResponse, Failure>> {
  const setup = await testSetup(ctx, workflowId, req);
  if (!setup.ok) return setup;
  const missing = setup.value.definition.inputs
    .filter((i) => i.required && empty(setup.value.inputs[i.name]))
    .map((i) => i.name);
  if (missing.length > 0)
    return {
      ok: true,
      value: {
        status: "error",
        outputs: null,
        blocks: [],
        error: `required inputs are empty: ${missing.join(", ")} (a cell would end skipped)`,
        costCredits: 0,
      },
    };
  return { ok: true, value: await runTest(ctx, setup.value, clientSignal) };
}

interface RunEnd {
  result?: RunOutput;
  failure?: unknown;
}

async function runTest(
  ctx: ServiceContext,
  setup: TestSetup,
  clientSignal: AbortSignal,
): Promise<TestWorkflowResponse> {
  const timeoutMs = readEnv().CELLFLOW_TEST_RUN_TIMEOUT_MS;
  // Secrets only where the workflow can use them, as a cell's attempt loads them.
  const secrets = needsSecrets(setup.definition)
    ? await loadSecrets(ctx.db, ctx.workspaceId, ctx.log)
    : {};
  const cut = new AbortController();
  const timer = setTimeout(
    () => cut.abort(new DeadlineError(`the test run took longer than ${timeoutMs} ms`)),
    timeoutMs,
  );
  const testRunId = newId("test");
  const gate = testRunGate(
    { db: ctx.db, lines: requestRateLines() },
    {
      workspaceId: ctx.workspaceId,
      plan: setup.plan,
      testRunId,
      deadlineAt: Date.now() + timeoutMs,
      onHalt: (halt) => cut.abort(halt),
    },
  );
  const traces = new Traces();
  const end: RunEnd = {};
  try {
    end.result = await runWorkflow({
      definition: setup.definition,
      inputs: setup.inputs,
      row: setup.row,
      executionId: testRunId,
      signal: AbortSignal.any([clientSignal, cut.signal]),
      secrets,
      paid: gate.paid,
      llm: gate.llm,
      lineage: gate.ledger,
      children: { path: [setup.workflowId], load: setup.loadChild },
      hooks: {
        onBlockStart: (id) => traces.start(id),
        onBlockComplete: (id, output) => traces.finish(id, { status: "completed", output }),
        checkpoint: gate.checkpoint,
      },
    });
  } catch (err) {
    end.failure = err;
  } finally {
    clearTimeout(timer);
  }
  // Not a block's failure nor a cut (the time cap, the month's credits): a fault of ours.
  const fault =
    end.failure !== undefined && !(end.failure instanceof WorkflowError) && !cut.signal.aborted;
  // The calls cut off mid-flight gave their reservations back; the answers that finished
  // blocks got are charged even when no response will show them.
  const costCredits = await gate.settle();
  // The client left, or a fault of ours: no answer, and the route says which.
  if (clientSignal.aborted || fault) throw clientSignal.aborted ? clientSignal.reason : end.failure;
  const { status, error, cutShort } = howItEnded(end, cut.signal, traces);
  const finished = traces.finished();
  const outputs = setup.group
    ? groupOutputs(setup.group, finished)
    : leafOutput(setup.definition, finished);
  return {
    status,
    outputs: redact(outputs ?? null, secrets) as TestWorkflowResponse["outputs"],
    blocks: traces.reports(secrets, cutShort),
    error: error && redactText(error, secrets),
    costCredits,
  };
}

/** The run's status and error, the failing or pausing block marked in `traces`. */
function howItEnded(
  end: RunEnd,
  cut: AbortSignal,
  traces: Traces,
): { status: TestWorkflowResponse["status"]; error: string | null; cutShort: string | null } {
  if (end.failure instanceof WorkflowError) {
    for (const [id, message] of Object.entries(end.failure.blockErrors))
      traces.finish(id, { status: "error", error: message });
    return { status: "error", error: end.failure.message, cutShort: null };
  }
  if (end.failure !== undefined) {
    const message = cutMessage(cut.reason);
    return { status: "error", error: message, cutShort: message };
  }
  const paused = end.result?.paused;
  if (paused) {
    traces.finish(paused.blockId, { status: "paused" });
    return { status: "paused", error: null, cutShort: null };
  }
  return { status: "completed", error: null, cutShort: null };
}
