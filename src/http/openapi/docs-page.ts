/**
 * `GET /api/docs`: a reference page rendered on the server from the OpenAPI document.
 * Self-contained (inline styles, no script, nothing fetched from elsewhere), so it works
 * where neither the server nor its readers reach the internet. Every string taken from
 * the document is HTML-escaped.
 */
import type { OpenApiDocument } from "./document";

type Json = unknown;
type Obj = Record<string, Json>;

const isObj = (v: Json): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function esc(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** The document's prose uses back-quoted code; nothing else of Markdown. */
function prose(text: string): string {
  return esc(text).replace(/`([^`]+)`/g, "<code>$1</code>");
}

const anchor = (name: string) => `schema-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;

/** A schema as a short type expression, components linked by name. */
export function typeOf(schema: Json, depth = 0): string {
  if (!isObj(schema)) return "any";
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").at(-1) ?? schema.$ref;
    return `<a href="#${anchor(name)}">${esc(name)}</a>`;
  }
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    const list = schema[key];
    if (Array.isArray(list))
      return list.map((s) => typeOf(s, depth)).join(key === "allOf" ? " &amp; " : " | ");
  }
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => esc(JSON.stringify(v))).join(" | ");
  if ("const" in schema) return esc(JSON.stringify(schema.const));
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  const parts = type.map((t) => typeName(schema, t, depth));
  return parts.join(" | ");
}

function typeName(schema: Obj, type: Json, depth: number): string {
  switch (type) {
    case "array":
      return `${wrap(typeOf(schema.items, depth))}[]`;
    case "object":
      return objectType(schema, depth);
    case "integer":
    case "number":
    case "string":
    case "boolean":
    case "null":
      return type;
    default:
      return "any";
  }
}

const wrap = (t: string) => (t.includes(" | ") || t.includes(" &amp; ") ? `(${t})` : t);

function objectType(schema: Obj, depth: number): string {
  const props = isObj(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const names = Object.keys(props);
  if (names.length === 0) {
    const values = schema.additionalProperties;
    return isObj(values) ? `{ [key: string]: ${typeOf(values, depth + 1)} }` : "object";
  }
  const pad = "  ".repeat(depth + 1);
  const fields = names.map(
    (n) => `${pad}${esc(n)}${required.has(n) ? "" : "?"}: ${typeOf(props[n], depth + 1)}`,
  );
  return `{\n${fields.join("\n")}\n${"  ".repeat(depth)}}`;
}

function constraints(schema: Json): string {
  if (!isObj(schema)) return "";
  const notes: string[] = [];
  for (const key of ["pattern", "minimum", "maximum", "minLength", "maxLength", "default"])
    if (key in schema) notes.push(`${key} ${JSON.stringify(schema[key])}`);
  if (typeof schema.description === "string") notes.unshift(schema.description);
  return notes.length > 0 ? ` <span class="note">${prose(notes.join("; "))}</span>` : "";
}

function parameters(op: Obj): string {
  const params = Array.isArray(op.parameters) ? op.parameters.filter(isObj) : [];
  if (params.length === 0) return "";
  const rows = params.map((p) => {
    const name = esc(String(p.name));
    const where = esc(String(p.in));
    const req = p.required ? "" : "?";
    // A JSON-encoded parameter carries its schema under `content`.
    const json =
      isObj(p.content) && isObj(p.content["application/json"])
        ? p.content["application/json"]
        : null;
    const schema = json ? json.schema : p.schema;
    const type = `${typeOf(schema)}${json ? " as JSON" : ""}`;
    return `<tr><td><code>${name}${req}</code></td><td>${where}</td><td><code>${type}</code>${constraints(schema)}</td></tr>`;
  });
  return `<table><tr><th>Parameter</th><th>In</th><th>Type</th></tr>${rows.join("")}</table>`;
}

function content(c: Json): string {
  if (!isObj(c)) return "";
  return Object.entries(c)
    .map(([type, media]) => {
      const schema = isObj(media) ? media.schema : undefined;
      return `<div><span class="media">${esc(type)}</span> <pre>${typeOf(schema)}</pre></div>`;
    })
    .join("");
}

function mediaSchema(response: Json): Json {
  if (!isObj(response) || !isObj(response.content)) return undefined;
  const json = response.content["application/json"];
  return isObj(json) ? json.schema : undefined;
}

function operation(method: string, path: string, op: Obj): string {
  const id = typeof op.operationId === "string" ? op.operationId : `${method}-${path}`;
  const security = Array.isArray(op.security) ? op.security : [];
  const auth =
    security.length === 0
      ? "no key"
      : security.flatMap((s) => (isObj(s) ? Object.keys(s) : [])).join(" or ");
  const body = isObj(op.requestBody)
    ? `<h4>Request body${op.requestBody.required ? "" : " (optional)"}</h4>${content(op.requestBody.content)}`
    : "";
  const answers = isObj(op.responses) ? Object.entries(op.responses) : [];
  // Errors all share one shape: listed on one line rather than repeated.
  const errors = answers.filter(([, r]) => typeOf(mediaSchema(r)).includes(">ApiError<"));
  const responses = answers
    .filter((entry) => !errors.includes(entry))
    .map(([status, r]) => {
      const res = isObj(r) ? r : {};
      const text = typeof res.description === "string" ? prose(res.description) : "";
      return `<li><b>${esc(status)}</b> ${text}${content(res.content)}</li>`;
    })
    .join("");
  const errorLine =
    errors.length === 0
      ? ""
      : `<li>Errors, each an <a href="#${anchor("ApiError")}">ApiError</a>: ${errors
          .map(([status, r]) => {
            const text = isObj(r) && typeof r.description === "string" ? r.description : "";
            return `<b>${esc(status)}</b> <span class="note">${prose(text)}</span>`;
          })
          .join("; ")}</li>`;
  return `<section class="op" id="${esc(id)}">
<h3><span class="method ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p>${prose(String(op.summary ?? ""))} <span class="note">(${esc(auth)})</span></p>
${typeof op.description === "string" ? `<p>${prose(op.description)}</p>` : ""}
${parameters(op)}${body}<h4>Responses</h4><ul>${responses}${errorLine}</ul></section>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:70rem;padding:1rem 2rem;color:#1d2330}
code,pre{font:13px/1.45 ui-monospace,monospace}pre{background:#f4f6f9;padding:.5rem .75rem;margin:.25rem 0;white-space:pre-wrap}
.op{border-top:1px solid #dde2ea;padding:.5rem 0}.method{display:inline-block;min-width:4.2rem;font-size:12px;color:#fff;padding:2px 6px;border-radius:3px;text-align:center}
.get{background:#2f7d4f}.post{background:#2459a8}.put,.patch{background:#a06a12}.delete{background:#a8322e}
.note{color:#5d6776;font-size:13px}.media{font-size:12px;color:#5d6776}table{border-collapse:collapse}td,th{border:1px solid #dde2ea;padding:2px 8px;text-align:left;vertical-align:top}
nav a{margin-right:.75rem}h4{margin:.5rem 0 .25rem}`;

export function docsPage(doc: OpenApiDocument): string {
  const paths = Object.entries(doc.paths ?? {});
  const byTag = new Map<string, string[]>();
  for (const [path, item] of paths) {
    for (const [method, op] of Object.entries(item as Obj)) {
      if (!isObj(op)) continue;
      const tag = Array.isArray(op.tags) ? String(op.tags[0]) : "Other";
      byTag.set(tag, [...(byTag.get(tag) ?? []), operation(method, path, op)]);
    }
  }
  const tags = [...byTag.keys()];
  const schemas = Object.entries(doc.components?.schemas ?? {}).sort(([a], [b]) =>
    a.localeCompare(b),
  );
  const schemaList = schemas
    .map(
      ([name, s]) =>
        `<section id="${anchor(name)}"><h3>${esc(name)}</h3><pre>${typeOf(s)}</pre></section>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(doc.info.title)} reference</title><style>${STYLE}</style></head>
<body><h1>${esc(doc.info.title)} <span class="note">OpenAPI ${esc(doc.openapi)}, version ${esc(doc.info.version)}</span></h1>
<p>${prose(doc.info.description ?? "")}</p>
<p>The machine-readable document: <a href="/api/openapi.json"><code>/api/openapi.json</code></a>.</p>
<nav>${tags.map((t) => `<a href="#tag-${anchor(t)}">${esc(t)}</a>`).join("")}<a href="#schemas">Schemas</a></nav>
${tags.map((t) => `<h2 id="tag-${anchor(t)}">${esc(t)}</h2>${(byTag.get(t) ?? []).join("\n")}`).join("\n")}
<h2 id="schemas">Schemas</h2>${schemaList}
</body></html>`;
}
