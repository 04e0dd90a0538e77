/**
 * The chaos workloads' billing provider: a loopback `company_lookup` provider on the
 * sink (`GET /company?domain=<domain>`, the workspace secret `COMPANY_LOOKUP_URL_1`
 * points at it) that answers deterministically by domain — found (`{ name }`) for most,
 * 404 (nothing found) for some, 500 (a provider failure) for a few — after its own
 * latency, so kills land mid-call. The sink logs every answer it sent; the money judge
 * reads them as the provider's log.
 */
import type { ProviderAnswer } from "./money-input";
import { json, type Sink } from "./sink";

export const COMPANY_PATH = "/company";
/** company_lookup's cost (src/enrichments/company-lookup.ts), in 1/1000 credit. */
export const COMPANY_MILLI = 5_000;

/** By the number in the domain (`co17.example`): 1 in 20 fails, 2 in 20 find nothing. */
export function companyKind(domain: string): ProviderAnswer["kind"] {
  const k = Number(/(\d+)\./.exec(domain)?.[1]);
  if (!Number.isInteger(k)) return "not_found";
  const r = k % 20;
  return r === 0 ? "error" : r <= 2 ? "not_found" : "found";
}

export const companyName = (domain: string) => `Company ${domain}`;

export function answerCompanies(sink: Sink, latencyMs: number): void {
  sink.on(
    COMPANY_PATH,
    (q) => {
      const domain = q.get("domain") ?? "";
      switch (companyKind(domain)) {
        case "found":
          return json({ name: companyName(domain) });
        case "not_found":
          return {
            status: 404,
            body: '{"error":"no such company"}',
            contentType: "application/json",
          };
        case "error":
          return {
            status: 500,
            body: '{"error":"provider down"}',
            contentType: "application/json",
          };
      }
    },
    latencyMs,
  );
}

/** The answers the sink sent on `path`, as the provider's log: `inputOf` names what was asked. */
export function providerLog(
  sink: Sink,
  path: string,
  inputOf: (query: URLSearchParams, search: string) => string,
): ProviderAnswer[] {
  return sink.answers
    .filter((a) => a.path === path)
    .map((a) => ({
      input: inputOf(new URLSearchParams(a.query), a.query),
      kind: a.status >= 200 && a.status < 300 ? "found" : a.status === 404 ? "not_found" : "error",
      at: a.at,
    }));
}
