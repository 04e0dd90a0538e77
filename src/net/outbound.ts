/**
 * The one door through which blocks and enrichment providers reach other servers (http
 * blocks, the llm block's client, provider GETs). Invariants: every outbound request goes
 * through `outboundFetch`; unless CELLFLOW_ALLOW_PRIVATE_NETWORK=1, no connection is ever
 * opened to a non-public address (`src/security/destinations.ts`): literal IP hosts and
 * `localhost` names are refused before the request, and every address a host name resolves
 * to is checked inside the connection's own DNS lookup, so an answer that changes between a
 * check and the connect (DNS rebinding) cannot slip through; redirects are followed here,
 * one hop at a time (at most MAX_REDIRECTS), each hop judged like the first; only http and
 * https are ever fetched. A refusal is a `DestinationRefused`, which callers treat as
 * permanent.
 */
import { promises as dns, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import {
  Agent,
  buildConnector,
  Headers as UndiciHeaders,
  type RequestInit as UndiciRequestInit,
  fetch as undiciFetch,
} from "undici";
import { allowPrivateNetwork } from "@/config/env";
import { isLocalHostName, literalAddress, nonPublicRange } from "@/security/destinations";

/** The signature of global `fetch`, which the OpenAI client also accepts as its `fetch`. */
export type OutboundFetch = (
  input: string | URL | Request,
  init?: RequestInit,
) => Promise<Response>;

export const MAX_REDIRECTS = 5;
const ALLOW_HINT = "set CELLFLOW_ALLOW_PRIVATE_NETWORK=1 to allow";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Removed when a redirect leaves the origin: what authenticates us to the first server. */
const CREDENTIAL_HEADERS = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "x-api-key",
  "api-key",
];
/** Removed when a redirect turns the request into a GET without a body (as fetch does). */
const BODY_HEADERS = [
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
  "content-location",
];

/** A request the destination policy will not send. Trying again cannot help. */
export class DestinationRefused extends Error {
  readonly retryable = false;
  constructor(
    readonly host: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "DestinationRefused";
  }
}

/** How destinations are judged. Replaceable for tests (`setDestinationPolicy`). */
export interface DestinationPolicy {
  /** Every address `hostname` resolves to. */
  resolve(hostname: string): Promise<LookupAddress[]>;
  /**
   * Why `address` may not be reached (the range it is in), or null when it may; `host` is
   * the name it was reached by, the address itself for a literal IP.
   */
  refuses(address: string, host: string): string | null;
}

export const systemPolicy: DestinationPolicy = {
  resolve: (hostname) => dns.lookup(hostname, { all: true, verbatim: true }),
  refuses: (address) => nonPublicRange(address),
};

function refusedName(host: string, address: string): DestinationRefused {
  return new DestinationRefused(
    host,
    `refused: ${host} resolves to a private address (${address}); ${ALLOW_HINT}`,
  );
}

function refusedLiteral(address: string, range: string): DestinationRefused {
  return new DestinationRefused(
    address,
    `refused: ${address} is a private address (${range}); ${ALLOW_HINT}`,
  );
}

/**
 * The lookup the connection itself uses: every answer is judged, not only the one it will
 * connect to, so a name with one public and one inward address is refused whole.
 */
function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const judge = (answers: LookupAddress[]) => {
      for (const a of answers) {
        if (policy.refuses(a.address, hostname) !== null) {
          callback(refusedName(hostname, a.address), "", 0);
          return;
        }
      }
      const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : options.family;
      const usable =
        family === 4 || family === 6 ? answers.filter((a) => a.family === family) : answers;
      const first = usable[0];
      if (!first) {
        const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: "ENOTFOUND",
          hostname,
        });
        callback(err, "", 0);
      } else if (options.all) callback(null, usable);
      else callback(null, first.address, first.family);
    };
    void policy.resolve(hostname).then(judge, (err: NodeJS.ErrnoException) => callback(err, "", 0));
  };
}

/**
 * An undici Agent whose connections are judged at connect time: a literal IP host before
 * the socket is opened (Node does no lookup for those), a host name inside its lookup.
 */
export function createGuardedAgent(policy: DestinationPolicy): Agent {
  const connect = buildConnector({ lookup: guardedLookup(policy) });
  return new Agent({
    connect(options, callback) {
      const literal = literalAddress(options.hostname);
      const range = literal === null ? null : policy.refuses(literal, literal);
      if (literal !== null && range !== null) callback(refusedLiteral(literal, range), null);
      else connect(options, callback);
    },
  });
}

let policy: DestinationPolicy = systemPolicy;
let guarded = createGuardedAgent(policy);
/** For CELLFLOW_ALLOW_PRIVATE_NETWORK=1: its own pool, so no connection crosses between the two. */
const unguarded = new Agent();

/**
 * Test seam: judge later requests by `next` (the system's policy when omitted). The
 * previous agent is closed, so no connection it judged is reused under the new policy.
 */
export async function setDestinationPolicy(next?: DestinationPolicy): Promise<void> {
  const previous = guarded;
  policy = next ?? systemPolicy;
  guarded = createGuardedAgent(policy);
  await previous.close();
}

/** Before a hop is sent: the scheme, and what can be judged without DNS. */
function checkUrl(url: URL, guard: boolean): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new DestinationRefused(
      url.host,
      `refused: ${url.protocol} URLs are not fetched, only http and https`,
    );
  }
  if (!guard) return;
  if (isLocalHostName(url.hostname)) {
    throw new DestinationRefused(
      url.hostname,
      `refused: ${url.hostname} is this machine (localhost); ${ALLOW_HINT}`,
    );
  }
  const literal = literalAddress(url.hostname);
  const range = literal === null ? null : policy.refuses(literal, literal);
  if (literal !== null && range !== null) throw refusedLiteral(literal, range);
}

/**
 * Why `text` would be refused before any request is sent (not an absolute http(s) URL,
 * this machine, a private literal address, under the policy in force), or null. A host
 * name is judged again at each send, on every address it resolves to then.
 */
export function urlRefusal(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute http(s) URL";
  }
  try {
    checkUrl(url, !allowPrivateNetwork());
    return null;
  } catch (err) {
    if (err instanceof DestinationRefused) return err.message;
    throw err;
  }
}

/** undici reports a failed connect as "fetch failed" with the reason in `cause`. */
function refusalIn(err: unknown): DestinationRefused | null {
  let at: unknown = err;
  for (let depth = 0; depth < 4 && at instanceof Error; depth++) {
    if (at instanceof DestinationRefused) return at;
    at = at.cause;
  }
  return null;
}

type Body = UndiciRequestInit["body"];

/** A body that can be sent again on a 307/308 redirect (a stream can be read only once). */
function replayable(body: Body): boolean {
  return (
    body == null ||
    typeof body === "string" ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof URLSearchParams ||
    body instanceof Blob
  );
}

function toUrl(input: string | URL | Request): URL {
  if (typeof input === "string") return new URL(input);
  if (input instanceof URL) return new URL(input.href);
  // A Request carries a body and a signal of its own; no caller passes one, so none is guessed at.
  throw new TypeError("outboundFetch takes a URL, not a Request");
}

async function send(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const guard = !allowPrivateNetwork();
  const dispatcher = guard ? guarded : unguarded;
  const mode = init.redirect ?? "follow";
  let url = toUrl(input);
  let method = (init.method ?? "GET").toUpperCase();
  const headers = new UndiciHeaders();
  for (const [name, value] of new Headers(init.headers)) headers.append(name, value);
  // The global and undici body types name the same runtime classes.
  let body = (init.body ?? null) as Body;
  for (let hop = 0; ; hop++) {
    checkUrl(url, guard);
    let res: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      res = await undiciFetch(url, {
        method,
        headers,
        body,
        signal: init.signal ?? null,
        redirect: "manual",
        dispatcher,
        ...(replayable(body) ? {} : { duplex: "half" as const }),
      });
    } catch (err) {
      throw refusalIn(err) ?? err;
    }
    const location = res.headers.get("location");
    if (!REDIRECT_STATUSES.has(res.status) || mode === "manual" || location === null) {
      // undici's Response is the class the global one is built from: same shape, other types.
      return res as unknown as Response;
    }
    await res.body?.cancel().catch(() => undefined);
    if (mode === "error") throw new TypeError(`unexpected redirect from ${url.host}`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new TypeError(`the redirect from ${url.host} has an invalid Location`);
    }
    if (hop >= MAX_REDIRECTS) {
      throw new DestinationRefused(
        next.host,
        `refused: more than ${MAX_REDIRECTS} redirects (the last to ${next.host})`,
      );
    }
    const toGet =
      ((res.status === 301 || res.status === 302) && method === "POST") ||
      (res.status === 303 && method !== "GET" && method !== "HEAD");
    if (toGet) {
      method = "GET";
      body = null;
      for (const name of BODY_HEADERS) headers.delete(name);
    } else if (!replayable(body)) {
      throw new TypeError(`the redirect from ${url.host} needs the request body again, a stream`);
    }
    if (next.origin !== url.origin) for (const name of CREDENTIAL_HEADERS) headers.delete(name);
    url = next;
  }
}

export const outboundFetch: OutboundFetch = (input, init) => send(input, init);

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
