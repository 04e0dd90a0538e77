/**
 * Sessions of the web UI: signing in checks an API key and hands it back to be set as
 * the session cookie (src/http/cookies.ts); requests then authenticate with that cookie.
 */
import type { SessionView, SessionWorkspace, SignInRequest } from "@/contracts/session";
import { type Failure, unauthorized } from "@/domain/errors";
import type { Result } from "@/domain/result";
import { looksLikeApiKey } from "@/store/api-keys/keys";
import { workspaceForKey, workspaceOfKey } from "@/store/api-keys/resolve";
import { getWorkspace } from "@/store/workspaces/read";
import type { ServiceContext } from "./context";

const INVALID_KEY = "The API key is not valid";

/** The workspace `req.apiKey` opens; 401 for an unknown, revoked or impossible key. */
export async function signIn(
  sys: Omit<ServiceContext, "workspaceId">,
  req: SignInRequest,
): Promise<Result<SessionView, Failure>> {
  // A key outside the shape could never authenticate, and must never reach a Set-Cookie.
  const workspace = looksLikeApiKey(req.apiKey) ? await workspaceOfKey(sys.db, req.apiKey) : null;
  if (!workspace) return { ok: false, reason: unauthorized(INVALID_KEY) };
  sys.log.info({ workspaceId: workspace.id }, "signed in");
  return { ok: true, value: { workspace } };
}

/**
 * The workspace id an API key (a bearer token or a session cookie's value) opens, or null
 * for an unknown, revoked or impossible key; an impossible one never reaches the database.
 */
export async function workspaceIdForKey(
  sys: Pick<ServiceContext, "db">,
  key: string,
): Promise<string | null> {
  return looksLikeApiKey(key) ? workspaceForKey(sys.db, key) : null;
}

/** Who the request's key or session cookie is. */
export async function currentSession(ctx: ServiceContext): Promise<Result<SessionView, Failure>> {
  const workspace = await getWorkspace(ctx.db, ctx.workspaceId);
  return workspace
    ? { ok: true, value: { workspace } }
    : { ok: false, reason: unauthorized(INVALID_KEY) };
}

/**
 * For the UI's server components: the workspace of the session cookie's value (as read
 * with `cookies().get("cellflow_session")?.value`), or null when it opens none.
 */
export async function workspaceFromCookies(
  sys: Pick<ServiceContext, "db">,
  cookieValue: string | undefined,
): Promise<SessionWorkspace | null> {
  if (!cookieValue || !looksLikeApiKey(cookieValue)) return null;
  return workspaceOfKey(sys.db, cookieValue);
}
