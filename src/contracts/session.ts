import { z } from "zod";

/** `POST /api/session`: the API key the web UI signs in with. */
export const SignInRequest = z.strictObject({
  apiKey: z.string().min(1, "must not be empty").max(512),
});
export type SignInRequest = z.infer<typeof SignInRequest>;

export const SessionWorkspace = z.object({ id: z.string(), name: z.string() });
export type SessionWorkspace = z.infer<typeof SessionWorkspace>;

/** What `POST` and `GET /api/session` answer. */
export const SessionView = z.object({ workspace: SessionWorkspace });
export type SessionView = z.infer<typeof SessionView>;
