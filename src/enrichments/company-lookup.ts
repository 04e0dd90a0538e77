/**
 * company_lookup: firmographics for a domain from HTTP providers the workspace configures
 * in its secrets, tried in order. Scheme: `COMPANY_LOOKUP_URL_<n>` (base URL) and
 * optionally `COMPANY_LOOKUP_KEY_<n>` (sent as `Authorization: Bearer <key>`), for n = 1 …
 * MAX_PROVIDERS, in order of n; provider n is named `provider_<n>`. Request:
 * `GET <base URL>?domain=<domain>`. Invariants: a key never appears in a message (a body
 * excerpt that echoes it is redacted); 404, an empty body or an answer without any known
 * field is "nothing found"; any other non-2xx is a provider error; answers are parsed,
 * never trusted: only known fields of the expected types become outputs.
 */
import { z } from "zod";
import { redactedExcerpt } from "@/security/redact";
import { domainOf, text } from "./fields";
import { busyFor, cappedGet, decodeText } from "./http";
import { type Enrichment, type Provider, ProviderError } from "./types";

export const MAX_PROVIDERS = 9;
const TIMEOUT_MS = 10_000;
const MAX_BYTES = 256 * 1024;
const EXCERPT_CHARS = 120;
const MAX_FIELD_CHARS = 2_000;

const Inputs = z.object({ domain: text(2_000) });
type Inputs = z.infer<typeof Inputs>;

/** Field names providers commonly use, by output, first match wins. Dotted = nested. */
const ALIASES: Record<string, readonly string[]> = {
  name: ["name", "company_name", "companyName", "legal_name", "legalName"],
  industry: ["industry", "sector", "category.industry", "category"],
  size: [
    "size",
    "employees_range",
    "employeesRange",
    "employee_range",
    "employees",
    "employee_count",
    "employeeCount",
    "metrics.employees",
  ],
  country: ["country", "country_code", "countryCode", "geo.country", "location.country"],
  description: ["description", "summary", "about"],
  linkedin_url: ["linkedin_url", "linkedinUrl", "linkedin.url", "linkedin"],
};

/** Answers are objects, possibly wrapped in `data`, `company` or `result`. */
const Answer = z.record(z.string(), z.unknown());
type Answer = z.infer<typeof Answer>;

function pick(answer: Answer, path: string): unknown {
  let value: unknown = answer;
  for (const key of path.split(".")) {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Text outputs only: a number (an employee count) becomes text, anything else is dropped. */
function asText(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value !== "string") return null;
  const s = value.replace(/\s+/g, " ").trim();
  if (s === "") return null;
  return s.length > MAX_FIELD_CHARS ? `${s.slice(0, MAX_FIELD_CHARS)}…` : s;
}

export function mapCompany(body: unknown): Record<string, string | null> | null {
  const top = Answer.safeParse(body);
  if (!top.success) return null;
  let answer = top.data;
  for (const wrapper of ["data", "company", "result"]) {
    const inner = Answer.safeParse(answer[wrapper]);
    if (inner.success) {
      answer = inner.data;
      break;
    }
  }
  const out: Record<string, string | null> = {};
  for (const [output, paths] of Object.entries(ALIASES)) {
    out[output] = null;
    for (const path of paths) {
      const value = asText(pick(answer, path));
      if (value !== null) {
        out[output] = value;
        break;
      }
    }
  }
  return out;
}

function httpProvider(n: number, baseUrl: string, key: string | undefined): Provider<Inputs> {
  const id = `provider_${n}`;
  // The key in every form an echo could bring it back in, not only as it was sent.
  const secrets: Record<string, string> = key ? { KEY: key } : {};
  return {
    id,
    async lookup(inputs, call) {
      const domain = domainOf(inputs.domain);
      if (!domain) return null;
      let url: URL;
      try {
        url = new URL(baseUrl.trim());
      } catch {
        throw new ProviderError(`COMPANY_LOOKUP_URL_${n} is not a valid URL`, false);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new ProviderError(`COMPANY_LOOKUP_URL_${n} must be an http or https URL`, false);
      }
      url.searchParams.set("domain", domain);
      const res = await cappedGet(url, {
        timeoutMs: TIMEOUT_MS,
        maxBytes: MAX_BYTES,
        signal: call.signal,
        headers: {
          accept: "application/json",
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
      });
      const body = decodeText(res.bytes, res.headers.get("content-type"));
      if (res.status === 404 || res.status === 204) return null;
      if (res.status < 200 || res.status > 299) {
        const excerpt = redactedExcerpt(body, secrets, EXCERPT_CHARS, {
          truncated: res.truncated,
        });
        throw new ProviderError(
          `HTTP ${res.status} from ${id}${excerpt ? `: ${excerpt}` : ""}`,
          res.status === 408 || res.status === 429 || res.status >= 500,
          { retryAfterMs: busyFor(res) },
        );
      }
      if (res.truncated) throw new ProviderError(`the answer from ${id} is too large`, false);
      if (body.trim() === "") return null;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new ProviderError(`the answer from ${id} is not JSON`, false);
      }
      return mapCompany(parsed);
    },
  };
}

/** The configured providers, in order of n; a gap in the numbering ends nothing. */
export function companyProviders(secrets: Readonly<Record<string, string>>): Provider<Inputs>[] {
  const out: Provider<Inputs>[] = [];
  for (let n = 1; n <= MAX_PROVIDERS; n++) {
    const base = secrets[`COMPANY_LOOKUP_URL_${n}`];
    if (base === undefined || base.trim() === "") continue;
    out.push(httpProvider(n, base, secrets[`COMPANY_LOOKUP_KEY_${n}`]?.trim() || undefined));
  }
  return out;
}

export const companyLookupEnrichment: Enrichment<Inputs> = {
  id: "company_lookup",
  name: "Company lookup",
  description:
    "Company name, industry, size, country, description and LinkedIn URL for a domain (a URL or an e-mail address works too), from the HTTP providers configured in the workspace secrets COMPANY_LOOKUP_URL_<n> / COMPANY_LOOKUP_KEY_<n>, tried in order.",
  cost: 5,
  // Every spelling of a domain (a URL, an e-mail address, capitals) is one question.
  cacheInputs: (inputs) => domainOf(inputs.domain) ?? inputs.domain.trim(),
  inputs: [
    {
      id: "domain",
      type: "text",
      required: true,
      description: "A company domain, website URL or work e-mail address",
    },
  ],
  schema: Inputs,
  outputs: [
    { id: "name", type: "text", description: "Company name" },
    { id: "industry", type: "text", description: "Industry" },
    { id: "size", type: "text", description: "Employee count or range" },
    { id: "country", type: "text", description: "Country (as the provider gives it)" },
    { id: "description", type: "text", description: "Short description" },
    { id: "linkedin_url", type: "text", description: "LinkedIn page" },
  ],
  needsSecrets: true,
  providers: companyProviders,
  unconfigured:
    "No company lookup provider is configured: set the workspace secret COMPANY_LOOKUP_URL_1 (and COMPANY_LOOKUP_KEY_1 for its API key)",
};
