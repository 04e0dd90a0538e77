import { SignInRequest } from "@/contracts/session";
import { RequestError } from "@/domain/errors";
import { parseJsonBody } from "@/http/body";
import {
  cameOverHttps,
  clearedSessionCookie,
  sentByScript,
  sessionCookie,
  UI_HEADER,
} from "@/http/cookies";
import { publicRoute, systemContext, workspaceRoute } from "@/http/handler";
import { json, respond } from "@/http/respond";
import { currentSession, signIn } from "@/services/session";

export const dynamic = "force-dynamic";

/** Signs the web UI in: checks the key and sets it as the HttpOnly session cookie. */
export const POST = publicRoute(async (req) => {
  if (!sentByScript(req))
    throw new RequestError("validation_failed", "Send the sign-in as JSON", [
      {
        path: "content-type",
        message: `must be application/json (or send the header \`${UI_HEADER}: 1\`)`,
      },
    ]);
  const body = await parseJsonBody(req, SignInRequest);
  const session = await signIn(systemContext(), body);
  if (!session.ok) return respond(session);
  return json(session.value, 200, {
    "set-cookie": sessionCookie(body.apiKey, cameOverHttps(req)),
  });
});

/** Who the request's API key or session cookie is; 401 when neither opens a workspace. */
export const GET = workspaceRoute(async (_req, ctx) => respond(await currentSession(ctx)));

/**
 * Signs out: the browser drops the cookie. The key itself stays valid (it is the
 * workspace's API key); this needs no session, so a stale cookie can always be cleared.
 */
export const DELETE = publicRoute(
  async (req) =>
    new Response(null, {
      status: 204,
      headers: {
        "set-cookie": clearedSessionCookie(cameOverHttps(req)),
        "cache-control": "no-store",
      },
    }),
);
