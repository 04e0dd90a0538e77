import { timingSafeEqual } from "node:crypto";
import type { Db } from "@db/client";
import { readEnv } from "@/config/env";
import { RequestError } from "@/domain/errors";
import { workspaceIdForKey } from "@/services/session";
import { isSafeMethod, readCookie, SESSION_COOKIE, UI_HEADER } from "./cookies";

const BEARER = /^Bearer ([A-Za-z0-9_\-.~+/=]{1,512})$/;

export function bearerToken(req: Request): string | null {
  const header = req.headers.get("authorization");
  const match = header ? BEARER.exec(header.trim()) : null;
  return match?.[1] ?? null;
}

/**
 * The workspace of the request's API key; 401 for a missing, unknown or revoked key. The
 * key comes from `Authorization: Bearer`, or, when that header is absent, from the web
 * UI's session cookie.
 */
export async function authenticate(req: Request, db: Db): Promise<string> {
  if (req.headers.has("authorization")) {
    const key = bearerToken(req);
    if (!key)
      throw new RequestError("unauthorized", "Send an API key as `Authorization: Bearer <key>`");
    const workspaceId = await workspaceIdForKey({ db }, key);
    if (!workspaceId) throw new RequestError("unauthorized", "The API key is not valid");
    return workspaceId;
  }
  const session = readCookie(req, SESSION_COOKIE);
  if (session === null)
    throw new RequestError(
      "unauthorized",
      "Send an API key as `Authorization: Bearer <key>` (or sign in with POST /api/session)",
    );
  // A browser attaches the cookie to whatever request a page makes, other sites' pages
  // included: a change needs the header such pages cannot send.
  if (!isSafeMethod(req.method) && req.headers.get(UI_HEADER) !== "1")
    throw new RequestError(
      "unauthorized",
      `A signed-in request that changes something must carry the header \`${UI_HEADER}: 1\``,
    );
  const workspaceId = await workspaceIdForKey({ db }, session);
  if (!workspaceId)
    throw new RequestError("unauthorized", "The session is no longer valid; sign in again");
  return workspaceId;
}

/**
 * The admin routes' gate: `Authorization: Bearer <CELLFLOW_ADMIN_TOKEN>`, nothing else (an
 * API key or a session cookie is a 401). Without an admin token configured the admin
 * routes do not exist (404).
 */
export function requireAdmin(req: Request): void {
  const adminToken = readEnv().CELLFLOW_ADMIN_TOKEN;
  if (!adminToken) throw new RequestError("not_found", "Not found");
  const given = bearerToken(req);
  if (!given || !sameSecret(given, adminToken))
    throw new RequestError("unauthorized", "The admin token is not valid");
}

/**
 * `GET /api/metrics`'s gate: `Authorization: Bearer <CELLFLOW_METRICS_TOKEN>`, or the admin
 * token when no metrics token is set; with neither, the route does not exist (404).
 */
export function requireMetricsToken(req: Request): void {
  const env = readEnv();
  const token = env.CELLFLOW_METRICS_TOKEN ?? env.CELLFLOW_ADMIN_TOKEN;
  if (!token) throw new RequestError("not_found", "Not found");
  const given = bearerToken(req);
  if (!given || !sameSecret(given, token))
    throw new RequestError("unauthorized", "The metrics token is not valid");
}

/** Constant-time comparison for shared secrets (admin and metrics tokens). */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
