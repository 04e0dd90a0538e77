/**
 * What a refused save of a workflow shows: the API's issues (each once) under its
 * message, or, when it named no field, only why it failed.
 */
import { ApiError, describeError, type Issue } from "../api";

/** The issues without repeats: each is listed once. */
export function uniqueIssues(issues: Issue[]): Issue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.path}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function saveRefusal(err: unknown): { issues: Issue[]; error: string } {
  if (err instanceof ApiError && err.issues.length > 0)
    return { issues: uniqueIssues(err.issues), error: err.message };
  return { issues: [], error: describeError(err) };
}
