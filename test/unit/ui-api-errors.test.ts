/**
 * The web UI's typed client: every request it sends carries the UI header the API asks of
 * cookie-authenticated writes, and with the page's cookies; an error answer reaches the
 * forms as `ApiError` — with the API's code, message and field issues when the API
 * refused, and with the status alone when something else answered (a proxy's HTML page,
 * an empty body).
 */
import { describe, expect, it } from "vitest";
import { errorResponse } from "@/http/respond";
import { ApiError, answer, browserClient, describeError } from "@/ui/api";

/** The UI's client answered by `reply`; the requests it sent are in `sent`. */
function answeredBy(reply: () => Response) {
  const sent: Request[] = [];
  const client = browserClient({
    baseUrl: "http://cellflow.test",
    fetch: (req) => {
      sent.push(req);
      return Promise.resolve(reply());
    },
  });
  return { client, sent };
}

async function refusal(pending: Promise<unknown>): Promise<ApiError> {
  const err = await pending.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

describe("the UI's typed client", () => {
  it("an API refusal becomes an ApiError with its status, code, message and field issues", async () => {
    const issues = [
      { path: "columns.0.name", message: "must not be empty" },
      { path: "groups.1.workflowId", message: "no such workflow" },
    ];
    const { client } = answeredBy(() =>
      errorResponse("validation_failed", "The table is not valid", issues),
    );
    const err = await refusal(
      answer(
        client.PATCH("/api/tables/{id}", {
          params: { path: { id: "tbl_1" } },
          body: { columns: [{ id: "name", name: "", type: "text" }] },
        }),
      ),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe("validation_failed");
    expect(err.message).toBe("The table is not valid");
    expect(err.issues).toEqual(issues);
    expect(describeError(err)).toBe(
      "The table is not valid — columns.0.name: must not be empty; groups.1.workflowId: no such workflow",
    );
  });

  it("a row cap's 402 reaches the grid's add-row as its message, naming the cap", async () => {
    const message =
      "This table is at its plan's limit of 50,000 rows (free plan): delete rows or upgrade";
    const { client } = answeredBy(() => errorResponse("limit_reached", message));
    const err = await refusal(
      answer(
        client.POST("/api/tables/{id}/rows", {
          params: { path: { id: "tbl_1" } },
          body: { rows: [{ data: {} }] },
        }),
      ),
    );
    expect([err.status, err.code]).toEqual([402, "limit_reached"]);
    // What the grid's message line shows (GridPage's `fail`, the tables page's import).
    expect(describeError(err)).toBe(message);
  });

  it("an error page that is not JSON becomes an ApiError with the status", async () => {
    const { client } = answeredBy(
      () =>
        new Response("<html><body>502 Bad Gateway</body></html>", {
          status: 502,
          headers: { "content-type": "text/html" },
        }),
    );
    const err = await refusal(answer(client.GET("/api/tables")));
    expect(err.status).toBe(502);
    expect(err.code).toBe("internal");
    expect(err.message).toBe("The server answered 502");
    expect(err.issues).toEqual([]);
  });

  it("an error with an empty body, or JSON not in the API's shape, becomes an ApiError with the status", async () => {
    const empty = await refusal(
      answer(answeredBy(() => new Response(null, { status: 503 })).client.GET("/api/tables")),
    );
    expect([empty.status, empty.message]).toEqual([503, "The server answered 503"]);
    const other = answeredBy(() =>
      Response.json({ error: "rate limited", issues: "none" }, { status: 429 }),
    ).client;
    const odd = await refusal(answer(other.GET("/api/tables")));
    expect([odd.status, odd.code, odd.message, odd.issues]).toEqual([
      429,
      "internal",
      "The server answered 429",
      [],
    ]);
  });

  it("every request carries x-cellflow-ui: 1 and the page's cookies, reads and writes alike", async () => {
    const { client, sent } = answeredBy(() => new Response(null, { status: 204 }));
    expect(await answer(client.DELETE("/api/session"))).toBeUndefined();
    await answer(client.POST("/api/session", { body: { apiKey: "k" } }));
    await answer(client.GET("/api/tables"));
    expect(sent.map((r) => r.method)).toEqual(["DELETE", "POST", "GET"]);
    for (const req of sent) {
      expect(req.headers.get("x-cellflow-ui")).toBe("1");
      expect(req.credentials).toBe("same-origin");
      expect(req.headers.get("authorization")).toBeNull();
    }
  });
});
