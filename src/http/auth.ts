import { timingSafeEqual } from "node:crypto";
import type { Db } from "../../db/client";
import { RequestError } from "../domain/errors";
import { workspaceForKey } from "../store/api-keys/resolve";

const BEARER = /^Bearer ([A-Za-z0-9_\-.~+/=]{1,512})$/;

export function bearerToken(req: Request): string | null {
  const header = req.headers.get("authorization");
  const match = header ? BEARER.exec(header.trim()) : null;
  return match?.[1] ?? null;
}

/** The workspace of the request's API key; 401 for a missing, unknown or revoked key. */
export async function authenticate(req: Request, db: Db): Promise<string> {
  const key = bearerToken(req);
  if (!key)
    throw new RequestError("unauthorized", "Send an API key as `Authorization: Bearer <key>`");
  const workspaceId = await workspaceForKey(db, key);
  if (!workspaceId) throw new RequestError("unauthorized", "The API key is not valid");
  return workspaceId;
}

/** Constant-time comparison for shared secrets (admin token). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
