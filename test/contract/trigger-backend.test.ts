/**
 * The trigger.dev adapter against a fake of the trigger.dev HTTP API: what the real SDK
 * sends for our enqueues and cancels is what the service expects (paths, payload,
 * idempotency key and its global scope, tags, concurrency key, batching), and failures
 * of the service are retried without starting a run twice.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { carrierSpec, stamperSpec } from "@/backends/port";
import { BATCH_SIZE, TriggerBackend } from "@/backends/trigger";
import { log } from "@/config/log";
import { type FakeTrigger, startFakeTrigger } from "../helpers/fake-trigger";

let fake: FakeTrigger;
let backend: TriggerBackend;

beforeAll(async () => {
  fake = await startFakeTrigger();
  backend = new TriggerBackend({
    accessToken: "tr_dev_contract",
    baseURL: fake.url,
    log: log(),
    backoffMs: () => 1,
  });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
});

const json = (body: string) => JSON.parse(body) as Record<string, unknown>;

describe("the trigger.dev backend", () => {
  it("triggers one carrier with its payload, global idempotency key, tags and table concurrency key", async () => {
    await backend.enqueue([carrierSpec({ tableId: "tbl_1", rowId: "row_1", dispatchId: "run_9" })]);
    expect(fake.requests).toHaveLength(1);
    const req = fake.requests[0];
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/api/v1/tasks/row-carrier/trigger");
    expect(req?.headers.authorization).toBe("Bearer tr_dev_contract");
    const body = json(req?.body ?? "{}");
    const payload = JSON.parse(String(body.payload)) as { json: unknown };
    expect(payload.json).toEqual({ tableId: "tbl_1", rowId: "row_1", dispatchId: "run_9" });
    const options = body.options as Record<string, unknown>;
    expect(options.concurrencyKey).toBe("tbl_1");
    expect(options.tags).toEqual(["table:tbl_1", "row:row_1", "dispatch:run_9"]);
    expect(options.idempotencyKeyTTL).toBe("1h");
    // A global key: the hash of the key parts alone, no run id mixed in.
    const keyOptions = options.idempotencyKeyOptions as { key: string; scope: string };
    expect(keyOptions.scope).toBe("global");
    expect(keyOptions.key.startsWith("carrier:tbl_1:row_1-")).toBe(true);
    expect(options.idempotencyKey).toBe(createHash("sha256").update(keyOptions.key).digest("hex"));
  });

  it("a later enqueue of the same row gets a new key: a finished run must not swallow it", async () => {
    const spec = carrierSpec({ tableId: "tbl_1", rowId: "row_1" });
    await backend.enqueue([spec]);
    await backend.enqueue([spec]);
    const keys = fake.requests.map(
      (r) => (json(r.body).options as { idempotencyKey: string }).idempotencyKey,
    );
    expect(new Set(keys).size).toBe(2);
  });

  it("enqueues many rows in batches the API accepts, every item with its options", async () => {
    const specs = Array.from({ length: BATCH_SIZE + 20 }, (_, i) =>
      carrierSpec({ tableId: "tbl_2", rowId: `row_${i}`, dispatchId: "run_1" }),
    );
    specs.push(stamperSpec({ tableId: "tbl_2", dispatchId: "run_1" }));
    await backend.enqueue(specs);
    const creates = fake.requests.filter((r) => r.path === "/api/v3/batches");
    const items = fake.requests.filter((r) => /\/api\/v3\/batches\/[^/]+\/items$/.test(r.path));
    expect(creates.map((r) => json(r.body).runCount)).toEqual([BATCH_SIZE, 21]);
    const lines = items.flatMap((r) => r.body.split("\n").filter((l) => l.trim() !== ""));
    expect(lines).toHaveLength(BATCH_SIZE + 21);
    const parsed = lines.map(
      (l) => JSON.parse(l) as { task: string; options: Record<string, unknown> },
    );
    expect(parsed.filter((p) => p.task === "row-carrier")).toHaveLength(BATCH_SIZE + 20);
    expect(parsed.filter((p) => p.task === "stamp-dispatch")).toHaveLength(1);
    expect(parsed.every((p) => p.options.concurrencyKey === "tbl_2")).toBe(true);
    expect(parsed.every((p) => typeof p.options.idempotencyKey === "string")).toBe(true);
  });

  it("retries 500 and 429 answers with the same idempotency key, so one run starts", async () => {
    fake.failNext(2, 500);
    await backend.enqueue([carrierSpec({ tableId: "tbl_3", rowId: "row_1" })]);
    fake.failNext(1, 429);
    await backend.enqueue([carrierSpec({ tableId: "tbl_3", rowId: "row_2" })]);
    const triggers = fake.requests.filter((r) => r.path.endsWith("/trigger"));
    expect(triggers).toHaveLength(5);
    const keyOf = (i: number) =>
      (json(triggers[i]?.body ?? "{}").options as { idempotencyKey: string }).idempotencyKey;
    expect(new Set([keyOf(0), keyOf(1), keyOf(2)]).size).toBe(1);
    expect(keyOf(3)).toBe(keyOf(4));
  });

  it("gives up on a call that keeps failing, so the caller (and the re-drive) know", async () => {
    fake.failNext(100, 503);
    await expect(
      backend.enqueue([carrierSpec({ tableId: "tbl_4", rowId: "row_1" })]),
    ).rejects.toThrow();
    fake.failNext(0, 500);
  });

  it("cancels a run by id with one call, and a run the platform does not have is gone, not an error", async () => {
    fake.addRuns(["run_a"]);
    expect(await backend.cancelRun("run_a")).toEqual({ ok: true, value: "cancelled" });
    expect(await backend.cancelRun("run_unknown")).toEqual({ ok: true, value: "gone" });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /api/v2/runs/run_a/cancel",
      "POST /api/v2/runs/run_unknown/cancel",
    ]);
    expect(fake.cancelled.get("run_a")).toBe(1);
  });

  it("a failed cancel is not retried inside the call, and says whether and when to try again", async () => {
    fake.addRuns(["run_c"]);
    fake.outage(60_000, 503, 7);
    const outage = await backend.cancelRun("run_c");
    fake.outage(0, 503);
    expect(outage).toMatchObject({ ok: false, reason: { permanent: false, retryAfterMs: 7_000 } });
    fake.failNext(1, 429);
    expect(await backend.cancelRun("run_c")).toMatchObject({
      ok: false,
      reason: { permanent: false, retryAfterMs: 0 },
    });
    fake.failNext(1, 401);
    expect(await backend.cancelRun("run_c")).toMatchObject({
      ok: false,
      reason: { permanent: true },
    });
    expect(fake.requests).toHaveLength(3);
    expect(fake.cancelled.has("run_c")).toBe(false);
  });
});
