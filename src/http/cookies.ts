/**
 * The web UI's session cookie. It carries the workspace's API key itself (HttpOnly, so
 * page scripts never read it), and the browser sends it only to this site (SameSite=Strict).
 */

export const SESSION_COOKIE = "cellflow_session";
/**
 * The header a cookie-authenticated request that changes something must carry. A page
 * on another site cannot add a custom header to a form post or a simple fetch, and the
 * CORS preflight such a header needs is never granted, so this is the CSRF guard.
 */
export const UI_HEADER = "x-cellflow-ui";
export const SESSION_MAX_AGE_SECONDS = 30 * 24 * 60 * 60;

/** The value of cookie `name` in the request's Cookie header, or null. */
export function readCookie(req: Request, name: string): string | null {
  const header = req.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    // RFC 6265 allows a value in double quotes; the quotes are not part of it.
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"')
      ? value.slice(1, -1)
      : value;
  }
  return null;
}

/** True when the request reached us, or the proxy in front of us, over https. */
export function cameOverHttps(req: Request): boolean {
  if (new URL(req.url).protocol === "https:") return true;
  const forwarded = req.headers.get("x-forwarded-proto");
  return forwarded?.split(",")[0]?.trim().toLowerCase() === "https";
}

function cookie(value: string, maxAge: number, secure: boolean): string {
  const attrs = [`${SESSION_COOKIE}=${value}`, "HttpOnly", "SameSite=Strict", "Path=/"];
  attrs.push(`Max-Age=${maxAge}`);
  if (secure) attrs.push("Secure");
  return attrs.join("; ");
}

/** `key` must already be known to have the API key shape (only cookie-safe characters). */
export function sessionCookie(key: string, secure: boolean): string {
  return cookie(key, SESSION_MAX_AGE_SECONDS, secure);
}

export function clearedSessionCookie(secure: boolean): string {
  return cookie("", 0, secure);
}

/** GET and HEAD change nothing, so they need no CSRF header. */
export function isSafeMethod(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/**
 * Sign-in is guarded too (a forged sign-in would put the victim in the attacker's
 * workspace): a cross-site form can send neither a JSON content type nor the UI header.
 */
export function sentByScript(req: Request): boolean {
  const type = req.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  return type === "application/json" || req.headers.get(UI_HEADER) === "1";
}
