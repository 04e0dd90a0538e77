/**
 * What must not outlive an interrupted chaos run: worker processes (detached, in process
 * groups of their own, so a Ctrl-C does not reach them) and redis-servers. Each registers
 * its stop here while it runs; `run.ts` calls them all on SIGINT or SIGTERM.
 */
const stops = new Set<() => Promise<void>>();

/** Registers `stop` until the returned function is called. */
export function untilStopped(stop: () => Promise<void>): () => void {
  stops.add(stop);
  return () => stops.delete(stop);
}

export async function stopEverything(): Promise<void> {
  await Promise.allSettled([...stops].map((s) => s()));
  stops.clear();
}
