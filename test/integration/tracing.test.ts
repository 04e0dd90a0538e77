/**
 * Traces of one cell, from POST /runs through an in-process worker to a local OTLP/HTTP
 * receiver (JSON): the run span is the child of the request that started it, the
 * carrier's span starts a trace of its own linked to the run span (kept on the dispatch
 * row as a traceparent), and the attempt, its block and the block's provider call are
 * each the child of the one before, every span carrying the cell's ids.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { flushTracing, shutdownTracing } from "@/tracing/init";
import { apiClient, dataOf, startedRun } from "../helpers/api";
import { useTestDatabase } from "../helpers/db";
import { useWorker } from "../helpers/engine";
import { newWorkspace } from "../helpers/fixtures";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver";
import { waitFor } from "../helpers/processes";

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  // Before the worker starts: its start registers the SDK when the endpoint is set.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  process.env.OTEL_TRACES_SAMPLER = "always_on";
  const { url } = await useTestDatabase();
  await useWorker(url, 2);
});

afterAll(async () => {
  await shutdownTracing();
  await receiver.close();
});

/** The one span named `name` whose attribute `key` is `value`. */
function one(name: string, key: string, value: unknown): ReceivedSpan {
  const found = receiver.spans.filter((s) => s.name === name && s.attributes[key] === value);
  expect(found, `${name} with ${key}=${String(value)}`).toHaveLength(1);
  return found[0] as ReceivedSpan;
}

describe("the spans of a cell", () => {
  it("request → run (parent), run ← carrier (link), attempt → block → provider call (parents)", async () => {
    const { key } = await newWorkspace();
    const api = apiClient(key);
    const wf = await api.POST("/api/workflows", {
      body: {
        name: "w",
        definition: {
          inputs: [{ name: "email", required: true }],
          blocks: [
            {
              id: "e",
              type: "enrichment",
              enrichmentId: "email_domain",
              inputs: { email: "inputs.email" },
            },
          ],
        },
      },
    });
    const table = await api.POST("/api/tables", {
      body: {
        name: "traced",
        columns: [
          { id: "email", name: "email", type: "text" },
          { id: "dom", name: "dom", type: "text" },
        ],
        groups: [
          {
            id: "g",
            name: "G",
            kind: "workflow",
            workflowId: dataOf(wf).id,
            inputs: { email: "email" },
            outputs: [{ columnId: "dom", from: "e.domain" }],
          },
        ],
      },
    });
    const tableId = dataOf(table).id;
    const rows = await api.POST("/api/tables/{id}/rows", {
      params: { path: { id: tableId } },
      body: { rows: [{ data: { email: "x@gmail.com" } }] },
    });
    const rowId = dataOf(rows).rows[0]?.id as string;
    const run = startedRun(
      await api.POST("/api/tables/{id}/runs", {
        params: { path: { id: tableId } },
        body: { mode: "all" },
      }),
    );

    // The provider call ends last of the cell's spans but for its parents: wait for the carrier.
    await waitFor(async () => {
      await flushTracing();
      return receiver.spans.some(
        (s) => s.name === "carrier" && s.attributes["cellflow.row.id"] === rowId,
      );
    }, 20_000);

    const runSpan = one("run", "cellflow.run.id", run.dispatchId);
    expect(runSpan.attributes["cellflow.table.id"]).toBe(tableId);
    const request = receiver.spans.find((s) => s.spanId === runSpan.parentSpanId);
    expect(request?.name).toBe("request");
    expect(request?.traceId).toBe(runSpan.traceId);
    expect(request?.attributes).toMatchObject({
      "http.request.method": "POST",
      "url.path": `/api/tables/${tableId}/runs`,
      "http.response.status_code": 202,
    });

    const carrier = one("carrier", "cellflow.row.id", rowId);
    expect(carrier.traceId).not.toBe(runSpan.traceId);
    expect(carrier.parentSpanId ?? "").toBe("");
    expect(carrier.links).toEqual([{ traceId: runSpan.traceId, spanId: runSpan.spanId }]);
    expect(carrier.attributes).toMatchObject({
      "cellflow.table.id": tableId,
      "cellflow.run.id": run.dispatchId,
    });

    const attempt = one("attempt", "cellflow.row.id", rowId);
    expect(attempt.parentSpanId).toBe(carrier.spanId);
    expect(attempt.traceId).toBe(carrier.traceId);
    expect(attempt.attributes).toMatchObject({
      "cellflow.table.id": tableId,
      "cellflow.group.id": "g",
      "cellflow.run.id": run.dispatchId,
      "cellflow.attempt": 1,
      "cellflow.attempt.end": "completed",
    });
    const executionId = attempt.attributes["cellflow.execution.id"];
    expect(typeof executionId).toBe("string");

    const block = one("block", "cellflow.execution.id", executionId);
    expect(block.parentSpanId).toBe(attempt.spanId);
    expect(block.attributes).toMatchObject({
      "cellflow.block.id": "e",
      "cellflow.block.type": "enrichment",
    });

    const calls = receiver.spans.filter(
      (s) => s.name === "provider call" && s.parentSpanId === block.spanId,
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]?.traceId).toBe(carrier.traceId);
    expect(calls[0]?.attributes).toMatchObject({
      "cellflow.enrichment.id": "email_domain",
      "cellflow.provider.outcome": "found",
    });
    expect(calls[0]?.service).toBe("cellflow");
  });
});
