/**
 * Bounded GET requests for providers. Invariants: every request goes through
 * `outboundFetch`; it ends by the time cap or the caller's signal, whichever is first,
 * and the connection is closed either way; at most `maxBytes` of the body are ever held
 * (the rest is left unread). A timeout or a network failure is a retryable
 * `ProviderError`, a refused destination a permanent one; the caller's own abort is passed
 * on as its reason.
 */
import { retryAfterFromHeaders } from "@/domain/retry-after";
import { networkMessage } from "@/net/network-message";
import { DestinationRefused, outboundFetch, readCapped } from "@/net/outbound";
import { ProviderError } from "./types";

export interface CappedGet {
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
  signal: AbortSignal;
}

export interface CappedResponse {
  status: number;
  headers: Headers;
  /** After redirects. */
  url: string;
  bytes: Uint8Array;
  /** The body had more than `maxBytes`; `bytes` is its start. */
  truncated: boolean;
}

export async function cappedGet(url: URL, opts: CappedGet): Promise<CappedResponse> {
  const local = new AbortController();
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = AbortSignal.any([opts.signal, deadline, local.signal]);
  const fail = (err: unknown): unknown => {
    if (opts.signal.aborted) return opts.signal.reason;
    if (deadline.aborted) return new ProviderError(`timed out after ${opts.timeoutMs / 1000} s`);
    if (err instanceof ProviderError) return err;
    // A refused destination is permanent: not retryable, in the refusal's own words.
    if (err instanceof DestinationRefused) return new ProviderError(err.message, false);
    return new ProviderError(`the request to ${url.host} failed: ${networkMessage(err)}`);
  };
  try {
    const res = await outboundFetch(url, {
      method: "GET",
      headers: opts.headers,
      redirect: "follow",
      signal,
    });
    const { bytes, over: truncated } = await readCapped(res, opts.maxBytes);
    return { status: res.status, headers: res.headers, url: res.url || url.href, bytes, truncated };
  } catch (err) {
    throw fail(err);
  } finally {
    // Whatever ended the read, the connection must not stay open streaming into nothing.
    local.abort();
  }
}

/** Decodes with the charset the response names, UTF-8 when it names none or an unknown one. */
export function decodeText(bytes: Uint8Array, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([\w-]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/**
 * How long a provider that refused for now (429, 503) asked to be left alone, if it said
 * (`Retry-After`, capped): later calls to it wait that long (EnrichmentContext.providerBusy).
 */
export function busyFor(res: Pick<CappedResponse, "status" | "headers">): number | undefined {
  return res.status === 429 || res.status === 503 ? retryAfterFromHeaders(res.headers) : undefined;
}
