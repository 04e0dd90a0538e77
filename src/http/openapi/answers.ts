/**
 * Answers described as the server sends them. A contract schema is one zod schema for a
 * request and an answer, and the generator writes a field with a default (a group's
 * `autoRun`, a definition's `inputs`) as optional: true of a request, which may leave it
 * out, but not of an answer, which always carries it. So, on the generated document:
 * every schema an answer reaches lists its defaulted fields as required — in place when
 * no request uses the schema, else in a copy named `<Name>View` that the answers refer to
 * instead (a request keeps `Group`, a table's answer gets `GroupView`). Invariant: request
 * schemas are left exactly as generated; an answer schema accepts only what the server's
 * parse of its contract can produce.
 */

type Json = unknown;
type Schemas = Record<string, Json>;

const REF = "#/components/schemas/";

function isObject(value: Json): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The component names `node` refers to ($ref, and a discriminator's mapping). */
function refsOf(node: Json, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) refsOf(item, out);
  else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string" && value.startsWith(REF))
        out.add(value.slice(REF.length));
      else if (key === "mapping" && isObject(value)) {
        for (const target of Object.values(value))
          if (typeof target === "string" && target.startsWith(REF))
            out.add(target.slice(REF.length));
      } else refsOf(value, out);
    }
  }
  return out;
}

/** A deep copy of `node` whose references to `rename`'s keys point at their values. */
function renamed(node: Json, rename: ReadonlyMap<string, string>): Json {
  const target = (ref: Json) =>
    typeof ref === "string" && ref.startsWith(REF) && rename.has(ref.slice(REF.length))
      ? `${REF}${rename.get(ref.slice(REF.length))}`
      : ref;
  if (Array.isArray(node)) return node.map((item) => renamed(item, rename));
  if (!isObject(node)) return node;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref") out[key] = target(value);
    else if (key === "mapping" && isObject(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, target(v)]));
    else out[key] = renamed(value, rename);
  }
  return out;
}

/** Whether an object schema inside `node` (not behind a reference) has a defaulted field. */
function hasDefaultedField(node: Json): boolean {
  if (Array.isArray(node)) return node.some(hasDefaultedField);
  if (!isObject(node)) return false;
  const properties = node.properties;
  if (isObject(properties) && Object.values(properties).some((p) => isObject(p) && "default" in p))
    return true;
  return Object.values(node).some(hasDefaultedField);
}

/** `node` with every defaulted field of its inline object schemas required (mutates). */
function requireDefaulted(node: Json): void {
  if (Array.isArray(node)) for (const item of node) requireDefaulted(item);
  if (!isObject(node)) return;
  const properties = node.properties;
  if (isObject(properties)) {
    const required = Array.isArray(node.required) ? [...node.required] : [];
    for (const [name, p] of Object.entries(properties))
      if (isObject(p) && "default" in p && !required.includes(name)) required.push(name);
    if (required.length > 0) node.required = required;
  }
  for (const value of Object.values(node)) requireDefaulted(value);
}

/** Every component reachable from `roots` through references. */
function closure(roots: Iterable<string>, schemas: Schemas): Set<string> {
  const seen = new Set<string>();
  const queue = [...roots];
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (seen.has(name)) continue;
    seen.add(name);
    queue.push(...refsOf(schemas[name]));
  }
  return seen;
}

interface Operation {
  parameters?: Json;
  requestBody?: Json;
  responses?: Record<string, Json>;
}

const METHODS = ["get", "put", "post", "delete", "patch"] as const;

/** Rewrites `doc` (a generated OpenAPI document) so its answers read as sent. */
export function describeAnswers(doc: { paths?: Json; components?: { schemas?: Json } }): void {
  const schemas = doc.components?.schemas;
  if (!isObject(schemas) || !isObject(doc.paths)) return;
  const operations: Operation[] = Object.values(doc.paths)
    .filter(isObject)
    .flatMap((item) => METHODS.map((m) => item[m]).filter(isObject));
  const requests = closure(
    operations.flatMap((op) => [...refsOf(op.parameters), ...refsOf(op.requestBody)]),
    schemas,
  );
  const answers = closure(
    operations.flatMap((op) => [...refsOf(op.responses)]),
    schemas,
  );

  // Which answer schemas differ from their request reading: defaulted fields of their
  // own, or a reference to one that differs.
  const differs = new Map<string, boolean>();
  const check = (name: string): boolean => {
    const known = differs.get(name);
    if (known !== undefined) return known;
    differs.set(name, false); // a cycle adds nothing
    const schema = schemas[name];
    const result = hasDefaultedField(schema) || [...refsOf(schema)].some(check);
    differs.set(name, result);
    return result;
  };
  const changed = [...answers].filter(check).sort();
  const rename = new Map(
    changed.filter((name) => requests.has(name)).map((name) => [name, `${name}View`]),
  );
  for (const [name, view] of rename)
    if (view in schemas)
      throw new Error(`${view} is already a schema: cannot describe ${name}'s answer`);

  for (const name of changed) {
    const answer = renamed(schemas[name], rename);
    requireDefaulted(answer);
    schemas[rename.get(name) ?? name] = answer;
  }
  for (const op of operations)
    if (op.responses) op.responses = renamed(op.responses, rename) as Record<string, Json>;
}
