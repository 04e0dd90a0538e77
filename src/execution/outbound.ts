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
