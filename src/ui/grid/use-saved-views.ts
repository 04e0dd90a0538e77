"use client";
/**
 * A table's saved views in the grid: read once when the page opens, then kept by the
 * answers of this page's own creates, edits and deletes (views are not on the table's
 * event stream: another person's new view shows after a reload). Answers are read with
 * the contract's parser, which types a condition's value as JSON where the client says
 * `unknown` (as the table stream reads its events).
 */
import { useEffect, useRef, useState } from "react";
import { SavedView, ViewList } from "@/contracts/views";
import { answer, api, describeError } from "../api";
import { createBody, type ViewFields } from "./saved-views";

export interface SavedViews {
  /** The table's views, oldest first; null until read. */
  list: SavedView[] | null;
  create(name: string, fields: ViewFields): Promise<SavedView | null>;
  update(
    viewId: string,
    change: Partial<ViewFields> & { name?: string },
  ): Promise<SavedView | null>;
  remove(viewId: string): Promise<boolean>;
}

export function useSavedViews(tableId: string, onError: (text: string) => void): SavedViews {
  const [list, setList] = useState<SavedView[] | null>(null);
  const path = { params: { path: { id: tableId } } };
  // The page's `onError` is a new function each render; the read below must not follow it.
  const failed = useRef(onError);
  failed.current = onError;

  useEffect(() => {
    let current = true;
    // The parse inside the chain: an answer it refuses is said on the page, not unhandled.
    answer(api.GET("/api/tables/{id}/views", { params: { path: { id: tableId } } }))
      .then((read) => ViewList.parse(read).views)
      .then((views) => current && setList(views))
      .catch((err: unknown) => current && failed.current(describeError(err)));
    return () => {
      current = false;
    };
  }, [tableId]);

  /** A call's answer, or null with its failure said on the page. */
  const attempt = async <T>(call: () => Promise<T>): Promise<T | null> => {
    try {
      return await call();
    } catch (err) {
      failed.current(describeError(err));
      return null;
    }
  };

  return {
    list,
    async create(name, fields) {
      const view = await attempt(() =>
        answer(
          api.POST("/api/tables/{id}/views", { ...path, body: createBody(name, fields) }),
        ).then((v) => SavedView.parse(v)),
      );
      if (view) setList((l) => [...(l ?? []), view]);
      return view;
    },
    async update(viewId, change) {
      const view = await attempt(() =>
        answer(
          api.PATCH("/api/tables/{id}/views/{viewId}", {
            params: { path: { id: tableId, viewId } },
            body: change,
          }),
        ).then((v) => SavedView.parse(v)),
      );
      if (view) setList((l) => (l ?? []).map((v) => (v.id === view.id ? view : v)));
      return view;
    },
    async remove(viewId) {
      const done = await attempt(() =>
        answer(
          api.DELETE("/api/tables/{id}/views/{viewId}", {
            params: { path: { id: tableId, viewId } },
          }),
        ),
      );
      if (done === null) return false;
      setList((l) => (l ?? []).filter((v) => v.id !== viewId));
      return true;
    },
  };
}
