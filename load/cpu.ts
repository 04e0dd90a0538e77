/**
 * Where the machine's CPU went during the load: the load script itself (autocannon and the
 * SSE clients), the API, the workers, PostgreSQL (the postmaster's children) and everything
 * else on the machine, from /proc (Linux; elsewhere the breakdown is left out).
 */
import fs from "node:fs";
import os from "node:os";

const TICK = 100; // USER_HZ: clock ticks per second on Linux.

function procSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which may contain spaces, sit after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICK;
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // Exited meanwhile.
    }
  }
  return out;
}

function machineBusySeconds(): number {
  return (
    os.cpus().reduce((n, c) => n + (c.times.user + c.times.nice + c.times.sys + c.times.irq), 0) /
    1000
  );
}

export interface CpuSample {
  at: number;
  machine: number;
  parts: Record<string, number>;
}

/** A sample of CPU seconds so far, per named process (and, for `postgres`, its children). */
export function sampleCpu(pids: Record<string, number>, postmaster?: number): CpuSample {
  const parts: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) parts[name] = procSeconds(pid);
  if (postmaster)
    parts.postgres = [postmaster, ...childrenOf(postmaster)].reduce(
      (n, pid) => n + procSeconds(pid),
      0,
    );
  return { at: performance.now(), machine: machineBusySeconds(), parts };
}

/**
 * Cores used on average between two samples, per part and for the rest of the machine.
 * Postgres backends that exited between the samples are not counted (connections here are
 * pooled and long-lived, so few do).
 */
export function coresBetween(a: CpuSample, b: CpuSample): Record<string, number> {
  const seconds = (b.at - a.at) / 1000;
  const out: Record<string, number> = {};
  let ours = 0;
  for (const [name, after] of Object.entries(b.parts)) {
    const used = Math.max(0, after - (a.parts[name] ?? 0));
    ours += used;
    out[name] = +(used / seconds).toFixed(2);
  }
  out.otherProcesses = +(Math.max(0, b.machine - a.machine - ours) / seconds).toFixed(2);
  out.machineTotal = +((b.machine - a.machine) / seconds).toFixed(2);
  return out;
}
