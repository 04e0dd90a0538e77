/**
 * The http block. Invariants: every request carries `Idempotency-Key: <executionId>:<blockId>`
 * (the same on every retry and re-drive of the block, so the receiver can de-duplicate);
 * the request is bound to the block's signal, so a timeout or a Stop closes the socket
 * instead of leaving it to finish in the background; at most MAX_RESPONSE_BYTES of a
 * response are ever held; every failure is a BlockError that says whether trying again
 * can help, except an abort, which is passed on as the signal's reason.
 */
import type { HttpBlock } from "@/contracts/workflow";
import { parseRetryAfter } from "@/domain/retry-after";
import { messageOf, networkMessage } from "@/net/network-message";
import { DestinationRefused, outboundFetch, readCapped } from "@/net/outbound";
import { redactedExcerpt } from "@/security/redact";
import { type ExpressionScope, renderTemplate } from "../expressions";
import { type BlockContext, BlockError, type BlockRunner } from "./types";

export const MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Of an error response only the start is read: it is for the message, not for output. */
const ERROR_BODY_BYTES = 4 * 1024;
const EXCERPT_CHARS = 300;

export interface HttpOutput {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Parsed when the response says it is JSON, else the text. */
  body: unknown;
}

interface PreparedRequest {
  url: URL;
  init: RequestInit;
}

export const runHttp: BlockRunner<HttpBlock> = async (block, ctx) => {
  const { url, init } = await prepare(block, ctx);
  // Aborted by us when a response grows too large, by the executor on timeout or Stop.
  const local = new AbortController();
  const signal = AbortSignal.any([ctx.signal, local.signal]);
  let res: Response;
  try {
    res = await outboundFetch(url, { ...init, signal });
  } catch (err) {
    throw transportFailure(block, ctx, url, err);
  }
  try {
    if (!res.ok) throw await statusFailure(block, ctx, url, res);
    const declared = Number(res.headers.get("content-length") ?? "");
    if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) throw tooLarge(block, url);
    const read = await readCapped(res, MAX_RESPONSE_BYTES);
    if (read.over) throw tooLarge(block, url);
    const output: HttpOutput = {
      status: res.status,
      headers: headerRecord(res.headers),
      body: decodeBody(res.headers.get("content-type"), read.bytes),
    };
    return { output };
  } catch (err) {
    throw transportFailure(block, ctx, url, err);
  } finally {
    // Whatever ended the read, the connection must not stay open streaming into nothing.
    local.abort();
  }
};

async function prepare(block: HttpBlock, ctx: BlockContext): Promise<PreparedRequest> {
  const scope = ctx.scope;
  const rendered = await renderField(block, "url", block.url, scope);
  let url: URL;
  try {
    url = new URL(rendered.trim());
  } catch {
    throw new BlockError(block.id, `the url is not a valid absolute URL`, { retryable: false });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BlockError(block.id, `the url must be http or https, not ${url.protocol}`, {
      retryable: false,
    });
  }
  const headers = new Headers();
  for (const [name, template] of Object.entries(block.headers ?? {})) {
    const value = await renderField(block, `header ${name}`, template, scope);
    try {
      headers.set(name, value);
    } catch {
      // The value is not quoted back: it may hold a secret.
      throw new BlockError(block.id, `the header ${JSON.stringify(name)} is not a valid header`, {
        retryable: false,
      });
    }
  }
  headers.set("idempotency-key", `${ctx.executionId}:${block.id}`);
  let body: string | undefined;
  if (block.body !== undefined) {
    if (block.method === "GET" || block.method === "HEAD") {
      throw new BlockError(block.id, `a ${block.method} request cannot have a body`, {
        retryable: false,
      });
    }
    body = JSON.stringify(await renderJson(block, block.body, scope));
    // A caller's own JSON media type (application/vnd.api+json, …) is kept.
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  return { url, init: { method: block.method, headers, body, redirect: "follow" } };
}

async function renderField(
  block: HttpBlock,
  where: string,
  template: string,
  scope: ExpressionScope,
): Promise<string> {
  try {
    return await renderTemplate(template, scope);
  } catch (err) {
    throw new BlockError(block.id, `the template in the ${where} failed: ${messageOf(err)}`, {
      retryable: false,
    });
  }
}

/** Renders the string leaves of a JSON body; keys and other values are sent as written. */
async function renderJson(
  block: HttpBlock,
  value: unknown,
  scope: ExpressionScope,
): Promise<unknown> {
  if (typeof value === "string") return renderField(block, "body", value, scope);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) out.push(await renderJson(block, item, scope));
    return out;
  }
  if (value !== null && typeof value === "object") {
    const entries: [string, unknown][] = [];
    for (const [key, item] of Object.entries(value)) {
      entries.push([key, await renderJson(block, item, scope)]);
    }
    // fromEntries defines own properties, so a "__proto__" key stays a plain key.
    return Object.fromEntries(entries);
  }
  return value;
}

function isJsonType(contentType: string | null): boolean {
  const media = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return media === "application/json" || media.endsWith("+json");
}

function decodeBody(contentType: string | null, bytes: Uint8Array): unknown {
  const text = new TextDecoder("utf-8").decode(bytes);
  if (!isJsonType(contentType)) return text;
  if (text.trim() === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // A server that mislabels its body still answered; the text is more useful than a failure.
    return text;
  }
}

function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    out[name] = name in out ? `${out[name]}, ${value}` : value;
  }
  return out;
}

async function statusFailure(
  block: HttpBlock,
  ctx: BlockContext,
  url: URL,
  res: Response,
): Promise<BlockError> {
  const status = res.status;
  let excerpt = "";
  try {
    const read = await readCapped(res, ERROR_BODY_BYTES);
    // Redacted before it is cut: a secret the server echoed must not leave as its start.
    excerpt = redactedExcerpt(
      new TextDecoder("utf-8").decode(read.bytes),
      ctx.scope.secrets,
      EXCERPT_CHARS,
      { truncated: read.over },
    );
  } catch {
    // The status says enough; a body that fails to arrive does not change the verdict.
  }
  const retryable = status === 408 || status === 429 || status >= 500;
  const retryAfterMs =
    status === 429 || status === 503 ? parseRetryAfter(res.headers.get("retry-after")) : undefined;
  return new BlockError(
    block.id,
    `HTTP ${status} from ${url.host}${excerpt ? `: ${excerpt}` : ""}`,
    { retryable, retryAfterMs },
  );
}

function tooLarge(block: HttpBlock, url: URL): BlockError {
  return new BlockError(
    block.id,
    `the response from ${url.host} is larger than ${MAX_RESPONSE_BYTES / (1024 * 1024)} MiB; it was not read`,
    { retryable: false },
  );
}

/**
 * An abort passes on as the signal's reason (the executor tells a timeout from a Stop);
 * our own BlockErrors pass unchanged; anything else is the network failing, which a retry
 * may well get past.
 */
function transportFailure(block: HttpBlock, ctx: BlockContext, url: URL, err: unknown): unknown {
  if (ctx.signal.aborted) return ctx.signal.reason;
  if (err instanceof BlockError) return err;
  // A destination the policy refuses stays refused: no retry, the refusal's own words.
  if (err instanceof DestinationRefused) {
    return new BlockError(block.id, err.message, { retryable: false });
  }
  return new BlockError(block.id, `the request to ${url.host} failed: ${networkMessage(err)}`, {
    retryable: true,
  });
}
