/** The one result shape every fallible store and service call returns. */
export type Result<T, R = string> = { ok: true; value: T } | { ok: false; reason: R };
