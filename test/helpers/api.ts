/**
 * Calls the real route handlers in-process. Routes are discovered from the files under
 * src/app/api, the way Next.js maps them, so a test cannot reach a route that the server
 * would not serve.
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

export type RouteHandler = (
  req: Request,
  ctx: { params: Promise<Record<string, string>> },
) => Promise<Response>;

interface RouteFile {
  pattern: RegExp;
  names: string[];
  file: string;
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
    const template = path
      .relative(path.dirname(API_DIR), path.dirname(r.file))
      .split(path.sep)
      .join("/");
    out.push({
      template: `/${template}`,
      methods: ["GET", "POST", "PUT", "PATCH", "DELETE"].filter(
        (m) => typeof mod[m] === "function",
      ),
    });
  }
  return out;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  rawBody?: string | Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
}

export interface ApiResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * The handler a path and method reach, with the path's params: `"no route"` when no
 * route file serves the path, `"no method"` when it does but not for this method.
 * Also what `npm run load` serves its API with (load/server.ts).
 */
export async function resolveRoute(
  pathname: string,
  method: string,
): Promise<{ handler: RouteHandler; params: Record<string, string> } | "no route" | "no method"> {
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
  return handler ? { handler, params } : "no method";
}

export async function call<T = unknown>(
  method: string,
  url: string,
  opts: CallOptions = {},
): Promise<ApiResponse<T>> {
  const parsed = new URL(url, "http://cellflow.test");
  const found = await resolveRoute(parsed.pathname, method);
  if (found === "no route") throw new Error(`no route file serves ${parsed.pathname}`);
  if (found === "no method") return { status: 405, body: null as T, headers: new Headers() };
  const { handler, params } = found;
  const headers = new Headers(opts.headers);
  if (opts.key) headers.set("authorization", `Bearer ${opts.key}`);
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers.set("content-type", "application/json");
  }
  const req = new Request(parsed, { method, headers, body });
  const res = await handler(req, { params: Promise.resolve(params) });
  const text = await res.text();
  let parsedBody: unknown = text;
  if ((res.headers.get("content-type") ?? "").includes("json") && text)
    parsedBody = JSON.parse(text);
  return { status: res.status, body: parsedBody as T, headers: res.headers };
}
