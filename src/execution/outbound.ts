/**
 * The one door through which workflow blocks reach other servers (http blocks, and the
 * llm block's client). Invariant: every outbound request of a block goes through
 * `outboundFetch`, so a policy on destinations (SSRF protection: private ranges, metadata
 * endpoints, redirects into them) can be added here once and covers every block.
 */

/** The signature of global `fetch`, which the OpenAI client also accepts as its `fetch`. */
export type OutboundFetch = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

export const outboundFetch: OutboundFetch = (input, init) => fetch(input, init);

/**
 * Reads at most `limit` bytes of a response; `over` says the body had more (the rest is
 * left unread and the stream cancelled, so the connection does not keep streaming).
 */
export async function readCapped(
  res: Response,
  limit: number,
): Promise<{ bytes: Uint8Array; over: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(0), over: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size));
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(chunks), over: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { bytes: Buffer.concat(chunks, size), over: false };
}
