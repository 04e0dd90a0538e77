/**
 * The workflow graph's edits as pure functions of a definition: each takes the definition
 * as parsed (any JSON: it may be half-written) and gives a new one, never changing its
 * argument, or null when the edit does not apply (no such block, an id taken). `next`
 * keeps the API's shapes: none, one id (a string), several ids (a list, only on fan-out),
 * or a condition's `{ "true": id, "false": id }`. Blocks are found by id (the first block
 * with that id, as the graph and the list name them).
 */
import type { BlockType } from "@/contracts/workflow";
import { withBlockAdded } from "./block-help";

type Json = Record<string, unknown>;
/** A condition's ports; null for a plain `next`. */
export type Port = "true" | "false" | null;

const isRecord = (v: unknown): v is Json =>
  v !== null && typeof v === "object" && !Array.isArray(v);

const BLOCK_ID = /^[a-z][a-z0-9_]{0,62}$/;

/** Whether `id` is a block id the API accepts. */
export function validBlockId(id: string): boolean {
  return BLOCK_ID.test(id);
}

function blocksOf(def: unknown): { def: Json; blocks: unknown[] } | null {
  if (!isRecord(def) || !Array.isArray(def.blocks)) return null;
  return { def, blocks: def.blocks };
}

function indexOfId(blocks: readonly unknown[], id: string): number {
  return blocks.findIndex((b) => isRecord(b) && b.id === id);
}

/** The block with `key` set to `value`, or without `key` when `value` is undefined. */
function withField(block: Json, key: string, value: unknown): Json {
  const out: Json = { ...block };
  if (value === undefined) delete out[key];
  else out[key] = value;
  return out;
}

/** A plain `next` from a list of ids: none, one (a string) or several (a list). */
function plainNext(ids: readonly string[]): unknown {
  if (ids.length === 0) return undefined;
  if (ids.length === 1) return ids[0];
  return [...ids];
}

function plainTargets(next: unknown): string[] {
  if (typeof next === "string") return [next];
  if (Array.isArray(next)) return next.filter((t): t is string => typeof t === "string");
  return [];
}

/** The definition with an example block of `type` added under a free id, and that id. */
export function addBlock(def: unknown, type: BlockType): { definition: Json; id: string } | null {
  return withBlockAdded(def, type);
}

/**
 * `source` continues to `target`: on a condition's port (replacing what the port held),
 * or appended to a plain `next` (a string for one, a list on fan-out). Connecting what is
 * already connected, or a block to itself, changes nothing.
 */
export function connect(def: unknown, source: string, port: Port, target: string): Json | null {
  const d = blocksOf(def);
  if (!d || source === target) return null;
  const at = indexOfId(d.blocks, source);
  const block = d.blocks[at];
  if (!isRecord(block) || indexOfId(d.blocks, target) < 0) return null;
  let next: unknown;
  if (port !== null) {
    const ports = isRecord(block.next) ? block.next : {};
    if (ports[port] === target) return null;
    next = { ...ports, [port]: target };
  } else {
    const targets = plainTargets(block.next);
    if (targets.includes(target)) return null;
    next = plainNext([...targets, target]);
  }
  return replaceAt(d, at, withField(block, "next", next));
}

/** `source` no longer continues to `target` (on `port` for a condition). */
export function disconnect(def: unknown, source: string, port: Port, target: string): Json | null {
  const d = blocksOf(def);
  if (!d) return null;
  const at = indexOfId(d.blocks, source);
  const block = d.blocks[at];
  if (!isRecord(block)) return null;
  const next = withoutTarget(block.next, target, port);
  if (next === NO_CHANGE) return null;
  return replaceAt(d, at, withField(block, "next", next));
}

const NO_CHANGE = Symbol("no change");

/** `next` without `target` (on `port` only, when given); NO_CHANGE when it was not there. */
function withoutTarget(next: unknown, target: string, port: Port | "any"): unknown {
  if (isRecord(next)) {
    const ports = port === "any" ? (["true", "false"] as const) : port === null ? [] : [port];
    const out: Json = { ...next };
    let changed = false;
    for (const p of ports) {
      if (out[p] === target) {
        delete out[p];
        changed = true;
      }
    }
    return changed ? out : NO_CHANGE;
  }
  if (port !== null && port !== "any") return NO_CHANGE;
  const targets = plainTargets(next);
  if (!targets.includes(target)) return NO_CHANGE;
  return plainNext(targets.filter((t) => t !== target));
}

/**
 * An edge moved: `from` dropped and `to` connected, as one edit. Moved onto a link that
 * already exists, the two become that one link.
 */
export function reconnect(
  def: unknown,
  from: { source: string; port: Port; target: string },
  to: { source: string; port: Port; target: string },
): Json | null {
  const without = disconnect(def, from.source, from.port, from.target);
  if (!without) return null;
  return connect(without, to.source, to.port, to.target) ?? without;
}

/** The block with `id` removed, and every `next` that pointed at it. */
export function deleteBlock(def: unknown, id: string): Json | null {
  const d = blocksOf(def);
  if (!d || indexOfId(d.blocks, id) < 0) return null;
  const blocks = d.blocks
    .filter((b) => !(isRecord(b) && b.id === id))
    .map((b) => {
      if (!isRecord(b)) return b;
      const next = withoutTarget(b.next, id, "any");
      return next === NO_CHANGE ? b : withField(b, "next", next);
    });
  return { ...d.def, blocks };
}

export type RenameOutcome =
  | { ok: true; definition: Json }
  | { ok: false; reason: "invalid" | "taken" | "missing" };

/** The block `from` called `to`, and every `next` naming it renamed too. */
export function renameBlock(def: unknown, from: string, to: string): RenameOutcome {
  const d = blocksOf(def);
  if (!d || indexOfId(d.blocks, from) < 0) return { ok: false, reason: "missing" };
  if (!validBlockId(to)) return { ok: false, reason: "invalid" };
  if (from === to) return { ok: true, definition: d.def };
  if (indexOfId(d.blocks, to) >= 0) return { ok: false, reason: "taken" };
  const rename = (t: unknown) => (t === from ? to : t);
  const blocks = d.blocks.map((b) => {
    if (!isRecord(b)) return b;
    let out = b.id === from ? { ...b, id: to } : b;
    const next = b.next;
    if (typeof next === "string" && next === from) out = withField(out, "next", to);
    else if (Array.isArray(next) && next.includes(from))
      out = withField(out, "next", next.map(rename));
    else if (isRecord(next) && (next.true === from || next.false === from)) {
      const ports: Json = { ...next };
      for (const p of ["true", "false"]) if (p in ports) ports[p] = rename(ports[p]);
      out = withField(out, "next", ports);
    }
    return out;
  });
  return { ok: true, definition: { ...d.def, blocks } };
}

/**
 * The block at `index` replaced by `block` (a form's edit), keeping its `id` and `next`:
 * those are the graph's edits, so a form cannot break the links by accident.
 */
export function replaceBlock(def: unknown, index: number, block: Json): Json | null {
  const d = blocksOf(def);
  const old = d?.blocks[index];
  if (!d || !isRecord(old)) return null;
  let out = withField(block, "id", old.id);
  out = withField(out, "next", old.next);
  return replaceAt(d, index, out);
}

function replaceAt(d: { def: Json; blocks: unknown[] }, index: number, block: Json): Json {
  const blocks = [...d.blocks];
  blocks[index] = block;
  return { ...d.def, blocks };
}
