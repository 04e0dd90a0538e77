/**
 * website_meta: a page's title, description and Open Graph fields from one GET. Invariants:
 * the request ends within TIMEOUT_MS and at most MAX_BYTES are read (a longer page is
 * parsed from its start, where <head> is); a page that does not exist (404, 410) or is not
 * HTML is "nothing found"; other failures (5xx, 429, network, timeout) are provider
 * errors. Parsing is a tolerant scan of tags, not a DOM: it must survive any HTML.
 */
import { z } from "zod";
import { text } from "./fields";
import { busyFor, cappedGet, decodeText } from "./http";
import { type Enrichment, ProviderError } from "./types";

export const TIMEOUT_MS = 5_000;
export const MAX_BYTES = 1024 * 1024;
const MAX_FIELD_CHARS = 2_000;

const Inputs = z.object({ url: text(2_000) });
type Inputs = z.infer<typeof Inputs>;

/** An http(s) URL from what people type ("example.com", "https://…"); null for anything else. */
export function pageUrl(value: string): URL | null {
  const s = /^[a-z][a-z0-9+.-]*:/i.test(value) ? value : `https://${value}`;
  try {
    const url = new URL(s);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname ? url : null;
  } catch {
    return null;
  }
}

const NAMED: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  ndash: "–",
  mdash: "—",
  hellip: "…",
  copy: "©",
  reg: "®",
  trade: "™",
  laquo: "«",
  raquo: "»",
  rsquo: "’",
  lsquo: "‘",
  rdquo: "”",
  ldquo: "“",
};

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});/gi, (whole, code: string) => {
    if (code[0] === "#") {
      const n =
        code[1] === "x" || code[1] === "X"
          ? Number.parseInt(code.slice(2), 16)
          : Number.parseInt(code.slice(1), 10);
      return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : whole;
    }
    return NAMED[code.toLowerCase()] ?? whole;
  });
}

function clean(value: string | undefined): string | null {
  if (value === undefined) return null;
  const s = decodeEntities(value).replace(/\s+/g, " ").trim();
  if (s === "") return null;
  return s.length > MAX_FIELD_CHARS ? `${s.slice(0, MAX_FIELD_CHARS)}…` : s;
}

const ATTRIBUTE = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  // Skip the tag name itself.
  const body = tag.replace(/^<\s*[a-z]+/i, "");
  for (const m of body.matchAll(ATTRIBUTE)) {
    const name = m[1]?.toLowerCase();
    if (name && !(name in out)) out[name] = m[2] ?? m[3] ?? m[4] ?? "";
  }
  return out;
}

/** The page's metadata; absolute og:image against `base` (the URL after redirects). */
export function parseMeta(html: string, base: string): Record<string, string | null> {
  // Comments, scripts and styles may contain anything tag-like.
  const doc = html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<(script|style|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, " ");
  const meta = new Map<string, string>();
  for (const m of doc.matchAll(/<meta\b[^>]*>/gi)) {
    const attrs = attributes(m[0]);
    const key = (attrs.property ?? attrs.name ?? attrs.itemprop)?.trim().toLowerCase();
    const content = attrs.content;
    if (key && content !== undefined && !meta.has(key)) meta.set(key, content);
  }
  const title = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(doc)?.[1];
  let image = clean(meta.get("og:image") ?? meta.get("og:image:url"));
  if (image) {
    try {
      image = new URL(image, base).href;
    } catch {
      image = null;
    }
  }
  return {
    title: clean(title),
    description: clean(meta.get("description")),
    og_title: clean(meta.get("og:title")),
    og_description: clean(meta.get("og:description")),
    og_image: image,
    og_site_name: clean(meta.get("og:site_name")),
  };
}

async function fetchMeta(inputs: Inputs, signal: AbortSignal) {
  const url = pageUrl(inputs.url);
  if (!url) return null;
  const res = await cappedGet(url, {
    timeoutMs: TIMEOUT_MS,
    maxBytes: MAX_BYTES,
    signal,
    headers: {
      accept: "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
      "user-agent": "Cellflow-Enrichment/1 (website_meta)",
    },
  });
  if (res.status === 404 || res.status === 410) return null;
  if (res.status < 200 || res.status > 299) {
    throw new ProviderError(
      `HTTP ${res.status} from ${url.host}`,
      res.status === 408 || res.status === 429 || res.status >= 500,
      { retryAfterMs: busyFor(res) },
    );
  }
  const type = res.headers.get("content-type");
  if (type && !/html|xml/i.test(type)) return null;
  return parseMeta(decodeText(res.bytes, type), res.url);
}

export const websiteMetaEnrichment: Enrichment<Inputs> = {
  id: "website_meta",
  name: "Website metadata",
  description: `A web page's title, meta description and Open Graph fields, from one GET request (at most ${TIMEOUT_MS / 1000} s and ${MAX_BYTES / (1024 * 1024)} MiB). A bare domain is fetched over https.`,
  cost: 1,
  // What is fetched: the URL as parsed (a bare domain over https, the host in lower case).
  cacheInputs: (inputs) => pageUrl(inputs.url.trim())?.href ?? inputs.url.trim(),
  inputs: [{ id: "url", type: "text", required: true, description: "A page URL or a domain" }],
  schema: Inputs,
  outputs: [
    { id: "title", type: "text", description: "<title>" },
    { id: "description", type: "text", description: '<meta name="description">' },
    { id: "og_title", type: "text", description: "og:title" },
    { id: "og_description", type: "text", description: "og:description" },
    { id: "og_image", type: "text", description: "og:image, as an absolute URL" },
    { id: "og_site_name", type: "text", description: "og:site_name" },
  ],
  needsSecrets: false,
  providers: () => [{ id: "http_get", lookup: (inputs, call) => fetchMeta(inputs, call.signal) }],
};
