"use client";
/**
 * The System page's numbers, read again every POLL_MS while the page is open: the last
 * answer stays shown when a read fails (the failure is said beside it), only the newest
 * read lands, and nothing lands after unmount. A read starts only once the last one ended,
 * so a slow server is never asked twice at once.
 */
import { useEffect, useState } from "react";
import type { Schemas } from "@/client/cellflow-client";
import { answer, api, describeError } from "../api";

export type SystemView = Schemas["SystemView"];

export const POLL_MS = 2_000;

export function useSystem(): { view: SystemView | null; error: string | null; reads: number } {
  const [view, setView] = useState<SystemView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [reads, setReads] = useState(0);
  useEffect(() => {
    let alive = true;
    let timer: number | undefined;
    const read = async () => {
      try {
        const v = await answer(api.GET("/api/system"));
        if (!alive) return;
        setView(v);
        setError(null);
        setReads((n) => n + 1);
      } catch (err) {
        if (alive) setError(describeError(err));
      }
      if (alive) timer = window.setTimeout(() => void read(), POLL_MS);
    };
    void read();
    return () => {
      alive = false;
      window.clearTimeout(timer);
    };
  }, []);
  return { view, error, reads };
}
