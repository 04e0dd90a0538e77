/**
 * What W6 watches while a step runs: every Node process's RSS once a second (the bench's
 * own and each worker process's whole process group, read from /proc), the load average,
 * the database's relation sizes and events, and a time limit past which a step is cut
 * off (its statements cancelled) and reported as where it broke.
 */
import fs from "node:fs";
import os from "node:os";
import { type Database, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import { highWaterMiB, type RssSample, type Sizes, vmRssBytes } from "./w6-figures";

/** The pids of a process group (a worker started with spawnGroup leads its own). */
function groupPids(leader: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // The fields after the command's closing parenthesis: state, ppid, pgrp, ...
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === leader) pids.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return pids;
}

function rssOf(pid: number): number {
  try {
    return vmRssBytes(fs.readFileSync(`/proc/${pid}/status`, "utf8")) ?? 0;
  } catch {
    return 0;
  }
}

/**
 * Samples every second until stopped: "bench" (this process) and one label per worker
 * group (the group's processes summed: `node --import tsx` and anything it spawned).
 * `mark` starts a new span; `span()` gives the high-water marks since the last mark.
 */
export function startRssSampler(): {
  addWorker(label: string, leader: number): void;
  mark(): void;
  span(): Record<string, number>;
  all(): Record<string, number>;
  stop(): void;
} {
  const workers = new Map<string, number>();
  const samples: RssSample[] = [];
  let from = 0;
  const sample = () => {
    samples.push({ process: "bench", bytes: process.memoryUsage().rss });
    for (const [label, leader] of workers) {
      const bytes = groupPids(leader).reduce((sum, pid) => sum + rssOf(pid), 0);
      if (bytes > 0) samples.push({ process: label, bytes });
    }
  };
  sample();
  const timer = setInterval(sample, 1_000);
  return {
    addWorker: (label, leader) => workers.set(label, leader),
    mark: () => {
      sample();
      from = samples.length;
    },
    span: () => {
      sample();
      return highWaterMiB(samples.slice(from));
    },
    all: () => highWaterMiB(samples),
    stop: () => clearInterval(timer),
  };
}

export const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

const RELATIONS = ["rows", "cells", "events", "cell_attempts", "cell_count_deltas"];

/** Each relation's total size (table, indexes, TOAST), in bytes. */
export async function relationSizes(database: Database): Promise<Sizes> {
  const rows = await queryRows<{ name: string; bytes: string }>(
    database.db,
    sql`select r.name, pg_total_relation_size(r.name::regclass)::text as bytes
          from unnest(${`{${RELATIONS.join(",")}}`}::text[]) as r(name)`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
}

/** Events in the database, by kind (W6's database holds only its own tables). */
export async function eventCounts(database: Database): Promise<Record<string, number>> {
  const rows = await queryRows<{ kind: string; n: number }>(
    database.db,
    sql`select kind, count(*)::int as n from events group by kind`,
  );
  const out: Record<string, number> = { total: 0 };
  for (const r of rows) {
    out[r.kind] = r.n;
    out.total = (out.total ?? 0) + r.n;
  }
  return out;
}

/** What a step that ran into its limit leaves to report. */
export interface Broke {
  broke: true;
  afterMs: number;
  error: string;
}

/**
 * Runs `step` for at most `limitMs`: past it, every active statement in the database is
 * cancelled (the step's and the worker's alike), the step's failure awaited, and the
 * step reported as broken there instead of holding the rest of the benchmark.
 */
export async function withinLimit<T>(
  database: Database,
  limitMs: number,
  step: () => Promise<T>,
): Promise<T | Broke> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<"cut">((resolve) => {
    timer = setTimeout(() => resolve("cut"), limitMs);
  });
  const running = step();
  const first = await Promise.race([running, cut]);
  clearTimeout(timer);
  if (first !== "cut") return first;
  await database.db.execute(
    sql`select pg_cancel_backend(pid) from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and state = 'active'`,
  );
  const error = await running.then(
    () => "finished just after the limit",
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
  return { broke: true, afterMs: Math.round(performance.now() - started), error };
}

export function isBroke(x: unknown): x is Broke {
  return typeof x === "object" && x !== null && (x as { broke?: unknown }).broke === true;
}
