/**
 * Wake-up calls of this process's background loops, by name. Invariant: one set per name
 * per process, whichever copy of a module asks: they live on globalThis because Next.js
 * may load a second copy of a module for the API routes, and a Stop made by a route must
 * wake the loop the server's worker started.
 */
const holder = globalThis as { __cellflowWakers?: Map<string, Set<() => void>> };

/** The wake-up calls registered under `name` in this process (a loop adds and removes its own). */
export function processWakers(name: string): Set<() => void> {
  holder.__cellflowWakers ??= new Map();
  let set = holder.__cellflowWakers.get(name);
  if (!set) {
    set = new Set();
    holder.__cellflowWakers.set(name, set);
  }
  return set;
}

/** Calls every wake-up registered under `name`; none: the loop's next poll or schedule runs. */
export function wakeAll(name: string): void {
  for (const wake of processWakers(name)) wake();
}
