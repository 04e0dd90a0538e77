/**
 * The enrichment registry and runner without a network: the offline built-ins, the
 * parsers of the online ones, and the outcome rules (skipped, not_found, error, partial
 * blanking, cascade order) with in-memory providers.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cacheKeyOf } from "@/enrichments/cache-key";
import { ENRICHMENT_IDS } from "@/enrichments/catalog";
import { companyProviders, mapCompany } from "@/enrichments/company-lookup";
import { emailDomain } from "@/enrichments/email-domain";
import { domainOf } from "@/enrichments/fields";
import { normalizePhone } from "@/enrichments/phone-normalize";
import { getEnrichment, listEnrichments } from "@/enrichments/registry";
import { runEnrichment } from "@/enrichments/run";
import {
  type Enrichment,
  EnrichmentError,
  type Provider,
  ProviderError,
  type ResultCache,
} from "@/enrichments/types";
import { pageUrl, parseMeta } from "@/enrichments/website-meta";

const signal = () => new AbortController().signal;

type In = { key: string; hint?: string | undefined };

function fake(providers: Provider<In>[]): Enrichment<In> {
  return {
    id: "fake",
    name: "Fake",
    description: "",
    cost: 3,
    inputs: [
      { id: "key", type: "text", required: true, description: "" },
      { id: "hint", type: "text", required: false, description: "" },
    ],
    schema: z.object({ key: z.string(), hint: z.string().optional() }),
    outputs: [
      { id: "a", type: "text", description: "" },
      { id: "b", type: "text", description: "" },
    ],
    needsSecrets: false,
    providers: () => providers,
  };
}

const answers = (id: string, value: Record<string, unknown> | null, calls: string[] = []) =>
  ({
    id,
    lookup: async () => {
      calls.push(id);
      return value;
    },
  }) satisfies Provider<In>;

const failing = (id: string, message: string, retryable = true) =>
  ({
    id,
    lookup: async () => {
      throw new ProviderError(message, retryable);
    },
  }) satisfies Provider<In>;

describe("registry", () => {
  it("the catalog that table schemas are checked against is exactly the registry", () => {
    expect([...ENRICHMENT_IDS]).toEqual(listEnrichments().map((e) => e.id));
    expect([...ENRICHMENT_IDS]).toEqual([
      "email_domain",
      "phone_normalize",
      "website_meta",
      "company_lookup",
    ]);
  });

  it("every declared required input is required by the schema, and only those", () => {
    for (const e of listEnrichments()) {
      for (const input of e.inputs) {
        const others = Object.fromEntries(
          e.inputs.filter((i) => i.id !== input.id).map((i) => [i.id, "x"]),
        );
        expect(e.schema.safeParse(others).success, `${e.id}.${input.id}`).toBe(!input.required);
      }
    }
  });
});

describe("runEnrichment outcomes", () => {
  it("a missing required input calls no provider and blanks every output", async () => {
    const calls: string[] = [];
    const r = await runEnrichment(
      fake([answers("p1", { a: "x" }, calls)]),
      { key: "  " },
      {
        signal: signal(),
      },
    );
    expect(r.outcome).toBe("skipped");
    expect(r.outputs).toEqual({ a: null, b: null });
    expect(calls).toEqual([]);
    expect(r.details.missingInputs).toEqual(["key"]);
    expect(r.details.providers).toEqual([{ id: "p1", status: "skipped", costCredits: 0, ms: 0 }]);
  });

  it("the first non-empty answer wins and later providers are not called", async () => {
    const calls: string[] = [];
    const r = await runEnrichment(
      fake([
        answers("p1", null, calls),
        answers("p2", { a: "  ", b: "" }, calls),
        answers("p3", { a: "found" }, calls),
        answers("p4", { a: "never" }, calls),
      ]),
      { key: "k" },
      { signal: signal() },
    );
    expect(calls).toEqual(["p1", "p2", "p3"]);
    expect(r.outcome).toBe("ok");
    expect(r.details.providers.map((p) => [p.id, p.status, p.costCredits])).toEqual([
      ["p1", "empty", 0],
      ["p2", "empty", 0],
      ["p3", "found", 3],
      ["p4", "skipped", 0],
    ]);
    expect(r.details.costCredits).toBe(3);
  });

  it("a partial answer blanks the outputs it did not fill and drops undeclared ones", async () => {
    const r = await runEnrichment(
      fake([answers("p1", { a: " v ", extra: 1 })]),
      { key: "k" },
      {
        signal: signal(),
      },
    );
    expect(r.outputs).toEqual({ a: "v", b: null });
  });

  it("every provider finding nothing is not_found, costs nothing and is not an error", async () => {
    const r = await runEnrichment(
      fake([failing("p1", "HTTP 503"), answers("p2", null)]),
      { key: "k" },
      { signal: signal() },
    );
    expect(r.outcome).toBe("not_found");
    expect(r.outputs).toEqual({ a: null, b: null });
    expect(r.details.costCredits).toBe(0);
    expect(r.details.providers.map((p) => p.status)).toEqual(["error", "empty"]);
    expect(r.details.providers[0]?.error).toBe("HTTP 503");
  });

  it("every provider failing throws with every reason, retryable if any may recover", async () => {
    const err = await runEnrichment(
      fake([failing("p1", "HTTP 401", false), failing("p2", "HTTP 503", true)]),
      { key: "k" },
      { signal: signal() },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnrichmentError);
    const e = err as EnrichmentError;
    expect(e.message).toContain("p1: HTTP 401");
    expect(e.message).toContain("p2: HTTP 503");
    expect(e.retryable).toBe(true);
    expect(e.details.providers.map((p) => p.status)).toEqual(["error", "error"]);
  });

  it("a wrongly typed input is an error, not a skip", async () => {
    const err = await runEnrichment(
      fake([answers("p1", { a: "x" })]),
      { key: { no: 1 } },
      {
        signal: signal(),
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnrichmentError);
    expect((err as EnrichmentError).message).toContain('input "key"');
    expect((err as EnrichmentError).retryable).toBe(false);
  });

  it("no configured provider is an error that says how to configure one", async () => {
    const company = getEnrichment("company_lookup");
    if (!company) throw new Error("company_lookup missing");
    const err = await runEnrichment(
      company,
      { domain: "acme.com" },
      {
        signal: signal(),
        secrets: {},
      },
    ).catch((e: unknown) => e);
    expect((err as Error).message).toContain("COMPANY_LOOKUP_URL_1");
  });

  it("beforeCall runs before each provider call, in order, and its grant is in that provider's report", async () => {
    const calls: string[] = [];
    const result = await runEnrichment(
      fake([answers("p1", null, calls), answers("p2", { b: "y" }, calls)]),
      { key: "k" },
      {
        signal: signal(),
        beforeCall: async (id) => {
          calls.push(`before:${id}`);
          return id === "p2" ? { at: 1_700_000_000_000, waitedMs: 250 } : undefined;
        },
      },
    );
    expect(calls).toEqual(["before:p1", "p1", "before:p2", "p2"]);
    expect(result.details.providers.map((p) => p.rateLimit)).toEqual([
      undefined,
      { at: 1_700_000_000_000, waitedMs: 250 },
    ]);
  });

  it("a provider that says when to come back is reported busy for that long; other failures are not", async () => {
    const busy: [string, number][] = [];
    const refusing: Provider<In> = {
      id: "p1",
      lookup: async () => {
        throw new ProviderError("HTTP 429 from p1", true, { retryAfterMs: 2_000 });
      },
    };
    const result = await runEnrichment(
      fake([refusing, failing("p2", "HTTP 500"), answers("p3", { a: "x" })]),
      { key: "k" },
      { signal: signal(), providerBusy: (id, ms) => busy.push([id, ms]) },
    );
    expect(result.outcome).toBe("ok");
    expect(busy).toEqual([["p1", 2_000]]);
  });

  it("a cached answer calls no provider and no gate, costs nothing and says how old it is", async () => {
    const calls: string[] = [];
    const keys: string[] = [];
    const cache: ResultCache = {
      lookup: async (enrichmentId, key) => {
        keys.push(`${enrichmentId}:${key}`);
        return { kind: "hit", outcome: "ok", outputs: { a: "cached" }, ageMs: 1_500 };
      },
    };
    const result = await runEnrichment(
      fake([answers("p1", { a: "live" }, calls)]),
      { key: "k", hint: "" },
      {
        signal: signal(),
        cache,
        beforeCall: async () => {
          calls.push("before");
          return undefined;
        },
      },
    );
    expect(calls).toEqual([]);
    expect(keys).toHaveLength(1);
    expect(result.outcome).toBe("ok");
    expect(result.outputs).toEqual({ a: "cached", b: null });
    expect(result.details).toMatchObject({ costCredits: 0, cached: true, ageMs: 1_500 });
  });

  it("a miss keeps the providers' answer; a failure drops the lease; skips and free enrichments never ask", async () => {
    const log: string[] = [];
    const cache: ResultCache = {
      lookup: async () => ({
        kind: "lease",
        keep: async (r) => void log.push(`keep:${r.outcome}`),
        drop: async () => void log.push("drop"),
      }),
    };
    await runEnrichment(fake([answers("p1", null)]), { key: "k" }, { signal: signal(), cache });
    await runEnrichment(
      fake([failing("p1", "HTTP 500")]),
      { key: "k" },
      { signal: signal(), cache },
    ).catch(() => undefined);
    await runEnrichment(
      fake([answers("p1", { a: "x" })]),
      { key: "" },
      { signal: signal(), cache },
    );
    await runEnrichment(
      { ...fake([answers("p1", { a: "x" })]), cost: 0 },
      { key: "k" },
      { signal: signal(), cache },
    );
    expect(log).toEqual(["keep:not_found", "drop"]);
  });

  it("equal inputs give equal cache keys whatever their spelling or field order", () => {
    const company = getEnrichment("company_lookup");
    const meta = getEnrichment("website_meta");
    if (!company || !meta) throw new Error("missing");
    expect(cacheKeyOf(company, { domain: "https://www.ACME.com/about" })).toBe(
      cacheKeyOf(company, { domain: "jane@acme.com" }),
    );
    expect(cacheKeyOf(company, { domain: "acme.com" })).not.toBe(
      cacheKeyOf(company, { domain: "acme.org" }),
    );
    expect(cacheKeyOf(meta, { url: "Example.COM" })).toBe(
      cacheKeyOf(meta, { url: "https://example.com/" }),
    );
    const plain = fake([]);
    expect(cacheKeyOf(plain, { key: "k", hint: "h" })).toBe(
      cacheKeyOf(plain, { hint: "h", key: "k" }),
    );
  });

  it("an abort is passed on as the signal's reason, not recorded as a provider failure", async () => {
    const ctrl = new AbortController();
    const reason = new Error("stopped");
    const provider: Provider<In> = {
      id: "p1",
      lookup: async () => {
        ctrl.abort(reason);
        throw new Error("aborted fetch");
      },
    };
    const err = await runEnrichment(
      fake([provider, answers("p2", { a: "x" })]),
      { key: "k" },
      {
        signal: ctrl.signal,
      },
    ).catch((e: unknown) => e);
    expect(err).toBe(reason);
  });
});

describe("email_domain", () => {
  it("finds the domain, free-mail and role flags, tolerating display names and case", () => {
    expect(emailDomain("Ada <Ada.Lovelace@WWW.Example.CO.UK>")).toEqual({
      domain: "example.co.uk",
      free_mail: false,
      role_account: false,
      website: "https://example.co.uk",
    });
    expect(emailDomain("someone+tag@gmail.com")).toMatchObject({
      domain: "gmail.com",
      free_mail: true,
      website: null,
    });
    expect(emailDomain("Sales@acme.io")).toMatchObject({ role_account: true });
  });

  it("an address without a usable domain is nothing found", () => {
    for (const bad of ["nobody", "@x.com", "a@localhost", "a@1.2.3.4", "a@exa mple.com"])
      expect(emailDomain(bad), bad).toBeNull();
  });
});

describe("phone_normalize", () => {
  it("gives E.164, country and line type, with the country input for national numbers", () => {
    expect(normalizePhone("+1 650-253-0000")).toMatchObject({
      e164: "+16502530000",
      country: "US",
      line_type: "fixed_line_or_mobile",
    });
    expect(normalizePhone("020 7946 0018", "gb")).toMatchObject({
      e164: "+442079460018",
      country: "GB",
      line_type: "fixed_line",
    });
  });

  it("an invalid number, or a national one without a usable country, is nothing found", () => {
    expect(normalizePhone("n/a")).toBeNull();
    expect(normalizePhone("+1 123")).toBeNull();
    expect(normalizePhone("020 7946 0018", "United Kingdom")).toBeNull();
  });

  it("a number typed as a number column is accepted as text", async () => {
    const phone = getEnrichment("phone_normalize");
    if (!phone) throw new Error("phone_normalize missing");
    const r = await runEnrichment(
      phone,
      { phone: 16502530000, country: "US" },
      {
        signal: signal(),
      },
    );
    expect(r.outputs.e164).toBe("+16502530000");
  });
});

describe("website_meta parsing", () => {
  it("reads title, description and Open Graph fields from messy HTML", () => {
    const html = `<!doctype html><html><head>
      <!-- <title>commented out</title> -->
      <script>var s = "<meta name='description' content='from script'>";</script>
      <TITLE> Acme &amp; Co &#8212; Home </TITLE>
      <meta content="We make things." name=description>
      <meta property='og:title' content='Acme'>
      <meta property="og:description" content="The &quot;best&quot; things">
      <meta property="og:image" content="/img/card.png"/>
      <meta property="og:site_name" content=Acme>
      </head><body></body></html>`;
    expect(parseMeta(html, "https://acme.test/about")).toEqual({
      title: "Acme & Co — Home",
      description: "We make things.",
      og_title: "Acme",
      og_description: 'The "best" things',
      og_image: "https://acme.test/img/card.png",
      og_site_name: "Acme",
    });
  });

  it("takes a bare domain as https and refuses other schemes", () => {
    expect(pageUrl("acme.test/x")?.href).toBe("https://acme.test/x");
    expect(pageUrl("ftp://acme.test")).toBeNull();
  });
});

describe("company_lookup", () => {
  it("providers come from numbered secrets, in order of their number", () => {
    const ids = companyProviders({
      COMPANY_LOOKUP_URL_3: "http://c.test",
      COMPANY_LOOKUP_URL_1: "http://a.test",
      COMPANY_LOOKUP_KEY_1: "k1",
      COMPANY_LOOKUP_URL_2: " ",
    }).map((p) => p.id);
    expect(ids).toEqual(["provider_1", "provider_3"]);
  });

  it("maps common answer shapes to outputs and ignores values of the wrong type", () => {
    expect(
      mapCompany({
        data: { companyName: "Acme", sector: "Tools", employeeCount: 120, geo: { country: "DE" } },
      }),
    ).toEqual({
      name: "Acme",
      industry: "Tools",
      size: "120",
      country: "DE",
      description: null,
      linkedin_url: null,
    });
    expect(mapCompany({ name: { first: "x" } })?.name).toBeNull();
    expect(mapCompany([1, 2])).toBeNull();
  });

  it("takes a domain from a URL or an e-mail address", () => {
    expect(domainOf("https://www.Acme.com/about")).toBe("acme.com");
    expect(domainOf("jo@acme.com")).toBe("acme.com");
    expect(domainOf("not a domain")).toBeNull();
  });
});
