import { publicRoute } from "@/http/handler";
import { openApiDocument } from "@/http/openapi/document";
import { json } from "@/http/respond";

/** The OpenAPI 3.1 document of every route; no key needed (it holds nothing private). */
export const GET = publicRoute(async () => json(openApiDocument()));
