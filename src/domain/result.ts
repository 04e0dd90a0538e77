/** The one result shape every fallible store and service call returns. */
export type Result<T, R = string> = { ok: true; value: T } | { ok: false; reason: R };

export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

export function fail<R>(reason: R): { ok: false; reason: R } {
  return { ok: false, reason };
}
