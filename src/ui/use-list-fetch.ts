"use client";
/**
 * A list read from the API: null until the first answer, why the last read failed
 * (cleared when it reads again), and a way to read it again (Try again, or after a
 * change). A failed read keeps the list already shown; only the latest read lands, so a
 * slow answer never replaces a newer one, and nothing lands after unmount. A page's own
 * failures (a create or a delete refused) can be shown in the same place with `setError`.
 * `read` is called on mount and again whenever it changes: pass a module-level function.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { describeError } from "./api";

export interface ListFetch<T> {
  list: T[] | null;
  error: string | null;
  setError(error: string | null): void;
  reload(): Promise<void>;
}

export function useListFetch<T>(read: () => Promise<T[]>): ListFetch<T> {
  const [list, setList] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const latest = useRef(0);
  const reload = useCallback(async () => {
    const n = ++latest.current;
    setError(null);
    try {
      const answer = await read();
      if (n === latest.current) setList(answer);
    } catch (err) {
      if (n === latest.current) setError(describeError(err));
    }
  }, [read]);
  useEffect(() => {
    void reload();
    return () => {
      latest.current++;
    };
  }, [reload]);
  return { list, error, setError, reload };
}
