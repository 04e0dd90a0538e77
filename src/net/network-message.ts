/**
 * What a failed outbound request says about why. undici reports "fetch failed" and hides
 * the useful part (ECONNREFUSED, a TLS error, …) in `cause`; workflow blocks and
 * enrichment providers both surface it in the cell's error.
 */
export function networkMessage(err: unknown): string {
  const cause = err instanceof Error ? err.cause : undefined;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    if (cause.message) return cause.message;
    if (typeof code === "string") return code;
  }
  return messageOf(err);
}

/** The message of anything thrown, an Error or an object with a `message`. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err !== null && typeof err === "object" && "message" in err) return String(err.message);
  return String(err);
}
