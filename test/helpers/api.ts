/**
 * Calls the real route handlers in-process. Routes are discovered from the files under
 * src/app/api, the way Next.js maps them, so a test cannot reach a route that the server
 * would not serve. Every answer is checked against the OpenAPI document (status, content
 * type, JSON body): a test whose request gets an answer the document does not describe
 * fails, so the document cannot drift from what the server says.
 *
 * `apiClient` is the typed client (src/client) on this in-process transport: the tests'
 * way to call the API. What a typed client cannot send lives in ./raw-api.
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type CellflowClient, cellflowClient, type Schemas } from "@/client/cellflow-client";
import { ApiError } from "@/contracts/common";
import { expectDocumentedAnswer } from "./openapi-responses";

export type RouteHandler = (
  req: Request,
  ctx: { params: Promise<Record<string, string>> },
) => Promise<Response>;

interface RouteFile {
  pattern: RegExp;
  names: string[];
  file: string;
  /** The folder path under src/app, e.g. `/api/tables/[id]`. */
  template: string;
  catchAll: boolean;
}

const API_DIR = path.resolve(import.meta.dirname, "../../src/app/api");

function discover(): RouteFile[] {
  const out: RouteFile[] = [];
  const walk = (dir: string, segments: string[]) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name), [...segments, entry.name]);
      else if (entry.name === "route.ts") {
        const names: string[] = [];
        let catchAll = false;
        const parts = segments.map((s) => {
          if (s.startsWith("[...")) {
            catchAll = true;
            names.push(s.slice(4, -1));
            return "(.+)";
          }
          if (s.startsWith("[")) {
            names.push(s.slice(1, -1));
            return "([^/]+)";
          }
          return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        });
        out.push({
          pattern: new RegExp(`^/api/${parts.join("/")}$`),
          names,
          file: path.join(dir, entry.name),
          template: `/api/${segments.join("/")}`.replace(/\/$/, ""),
          catchAll,
        });
      }
    }
  };
  walk(API_DIR, []);
  // Static segments win over dynamic ones, and a catch-all comes last, as in Next.js.
  return out.sort(
    (a, b) => Number(a.catchAll) - Number(b.catchAll) || a.names.length - b.names.length,
  );
}

const routes = discover();

/** Every concrete route pattern with its methods, for tests that sweep the whole API. */
export async function listRoutes(): Promise<{ template: string; methods: string[] }[]> {
  const out: { template: string; methods: string[] }[] = [];
  for (const r of routes) {
    if (r.catchAll) continue;
    const mod = (await import(pathToFileURL(r.file).href)) as Record<string, unknown>;
    out.push({
      template: r.template,
      methods: ["GET", "POST", "PUT", "PATCH", "DELETE"].filter(
        (m) => typeof mod[m] === "function",
      ),
    });
  }
  return out;
}

/**
 * The handler a path and method reach, with the path's params: `"no route"` when no
 * route file serves the path, `"no method"` when it does but not for this method.
 * Also what `npm run load` serves its API with (load/server.ts).
 */
export async function resolveRoute(
  pathname: string,
  method: string,
): Promise<
  | { handler: RouteHandler; params: Record<string, string>; route: RouteFile }
  | "no route"
  | "no method"
> {
  const route = routes.find((r) => r.pattern.test(pathname));
  if (!route) return "no route";
  const match = route.pattern.exec(pathname);
  const params: Record<string, string> = {};
  route.names.forEach((n, i) => {
    params[n] = decodeURIComponent(match?.[i + 1] ?? "");
  });
  const mod = (await import(pathToFileURL(route.file).href)) as Record<
    string,
    RouteHandler | undefined
  >;
  const handler = mod[method];
  return handler ? { handler, params, route } : "no method";
}

/** Statuses whose answers carry no body (a Response refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

/**
 * A fetch that answers in-process: the route handler that serves the request's path, its
 * answer checked against the OpenAPI document (see the header) and returned readable.
 */
export async function inProcessFetch(req: Request): Promise<Response> {
  const url = new URL(req.url);
  const found = await resolveRoute(url.pathname, req.method);
  if (found === "no route") throw new Error(`no route file serves ${url.pathname}`);
  if (found === "no method") return new Response(null, { status: 405 });
  const { handler, params, route } = found;
  const res = await handler(req, { params: Promise.resolve(params) });
  const text = await res.text();
  const contentType = res.headers.get("content-type");
  let body: unknown = text;
  if ((contentType ?? "").includes("json") && text) body = JSON.parse(text);
  const target = `${url.pathname}${url.search}`;
  if (route.catchAll) {
    // The one route the document leaves out: unknown paths, always a 404 in the error shape.
    if (res.status !== 404 || !ApiError.safeParse(body).success)
      throw new Error(
        `${req.method} ${target} reached no route but answered ${res.status}: ${text.slice(0, 300)}`,
      );
  } else {
    expectDocumentedAnswer({
      method: req.method,
      template: route.template,
      url: target,
      status: res.status,
      contentType,
      body,
      text,
    });
  }
  return new Response(NO_BODY.has(res.status) ? null : text, {
    status: res.status,
    headers: res.headers,
  });
}

/** The typed client answering in-process; `key` is sent as the bearer key. */
export function apiClient(
  key?: string | null,
  headers: Record<string, string> = {},
): CellflowClient {
  return cellflowClient({
    baseUrl: "http://cellflow.test",
    ...(key ? { apiKey: key } : {}),
    headers,
    fetch: inProcessFetch,
  });
}

/** A typed call's data; an error answer fails the test with the API's answer. */
export function dataOf<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data === undefined)
    throw new Error(`${r.response.status} from the API: ${JSON.stringify(r.error ?? null)}`);
  return r.data;
}

/**
 * The run a `POST /runs` started: its answer is a started run or, on a dry run, an
 * estimate; a test that starts one fails on anything else.
 */
export function startedRun(r: {
  data?: Schemas["RunStarted"] | Schemas["RunEstimate"];
  error?: unknown;
  response: Response;
}): Schemas["RunStarted"] {
  const data = dataOf(r);
  if (!("dispatchId" in data)) throw new Error(`expected a started run: ${JSON.stringify(data)}`);
  return data;
}
