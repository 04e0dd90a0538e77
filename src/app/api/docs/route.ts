import { publicRoute } from "@/http/handler";
import { docsPage } from "@/http/openapi/docs-page";
import { openApiDocument } from "@/http/openapi/document";

/** A reference page rendered from the OpenAPI document; no key needed. */
export const GET = publicRoute(
  async () =>
    new Response(docsPage(openApiDocument()), {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        // The page is static markup: nothing on it may run or load from elsewhere.
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
      },
    }),
);
