import { getDatabase } from "@db/instance";
import { getBackend } from "@/backends/instance";
import { log } from "@/config/log";
import { RequestError } from "@/domain/errors";
import type { ServiceContext } from "@/services/context";
import { type Span, SpanKind, withSpan } from "@/tracing/spans";
import { authenticate } from "./auth";
import { PATH_ID } from "./path-ids";
import { errorResponse } from "./respond";

type Params = Record<string, string>;
interface RouteContext<P extends Params> {
  params: Promise<P>;
}

/** Nobody reads this answer; nginx's "client closed request" code names it in access logs. */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * Whether the request failed because its client went away (reading the body of an aborted
 * request rejects): that is the client's doing, not a fault of ours to log as one.
 */
function clientWentAway(err: unknown): boolean {
  // By the error's shape, not by the request's signal alone: a database failure that
  // happens after the client left is still ours to see. Not any ECONNRESET either (a
  // database connection reset is one). Reading the body of an aborted request rejects
  // with an AbortError (fetch's body) or node's Error("aborted") (the socket's stream).
  const e = err as { name?: unknown; message?: unknown } | null;
  return e?.name === "AbortError" || e?.message === "aborted";
}

/**
 * The request's span (a run it starts is its child), around the handler and its answer:
 * an error answered here is the span's status code, not a thrown error.
 */
function guard(req: Request, run: (span: Span) => Promise<Response>): Promise<Response> {
  return withSpan(
    "request",
    () => ({ "http.request.method": req.method, "url.path": new URL(req.url).pathname }),
    async (span) => {
      const response = await answer(req, () => run(span));
      span.setAttribute("http.response.status_code", response.status);
      return response;
    },
    { kind: SpanKind.SERVER },
  );
}

async function answer(req: Request, run: () => Promise<Response>): Promise<Response> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof RequestError) return errorResponse(err.code, err.message, err.issues);
    const url = new URL(req.url).pathname;
    if (clientWentAway(err)) {
      log().debug({ err, method: req.method, url }, "client went away before the answer");
      return new Response(null, { status: CLIENT_CLOSED_REQUEST });
    }
    log().error({ err, method: req.method, url }, "request failed");
    return errorResponse(
      "internal",
      "Something went wrong on our side; the request was not completed",
    );
  }
}

function checkPathIds(params: Params): void {
  for (const value of Object.values(params)) {
    if (!PATH_ID.test(value)) throw new RequestError("not_found", "Not found");
  }
}

/** What a public route reaches without a workspace: the database and the logger. */
export type PublicContext = Pick<ServiceContext, "db" | "log">;

/** A route that needs no API key (health, signed webhooks, admin with its own token). */
export function publicRoute<P extends Params = Params>(
  fn: (req: Request, params: P, sys: PublicContext) => Promise<Response>,
): (req: Request, route: RouteContext<P>) => Promise<Response> {
  return (req, route) =>
    guard(req, async () => {
      const params = ((await route?.params) ?? {}) as P;
      checkPathIds(params);
      return fn(req, params, { db: getDatabase().db, log: log() });
    });
}

/** What a service needs besides a workspace: for public routes that find theirs later. */
export function systemContext(): Omit<ServiceContext, "workspaceId"> {
  return { db: getDatabase().db, log: log(), backend: getBackend() };
}

/** A route scoped to the workspace of the request's API key. */
export function workspaceRoute<P extends Params = Params>(
  fn: (req: Request, ctx: ServiceContext, params: P) => Promise<Response>,
): (req: Request, route: RouteContext<P>) => Promise<Response> {
  return (req, route) =>
    guard(req, async (span) => {
      const { db } = getDatabase();
      const workspaceId = await authenticate(req, db);
      span.setAttribute("cellflow.workspace.id", workspaceId);
      const params = ((await route?.params) ?? {}) as P;
      checkPathIds(params);
      const ctx: ServiceContext = {
        db,
        workspaceId,
        log: log().child({ workspaceId }),
        backend: getBackend(),
      };
      return fn(req, ctx, params);
    });
}
