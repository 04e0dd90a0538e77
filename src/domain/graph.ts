/** A cycle in a directed graph given by `edges(node)`, as the list of nodes on it, or null. */
export function findCycle(
  nodes: Iterable<string>,
  edges: (node: string) => string[],
): string[] | null {
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    const s = state.get(id);
    if (s === 2) return null;
    if (s === 1) return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 1);
    stack.push(id);
    for (const n of edges(id)) {
      const found = visit(n);
      if (found) return found;
    }
    stack.pop();
    state.set(id, 2);
    return null;
  };
  for (const n of nodes) {
    const found = visit(n);
    if (found) return found;
  }
  return null;
}
