/**
 * Which page the grid reads next so the rows on screen are held: none while the window
 * covers them (with a margin), the page next to the window when they are just past one of
 * its ends (its cursor: keyset, both ways), else a new window where they are — the first
 * or the last page of the order (`from=end`: keyset from the end, no offset) or a seek to
 * their fraction of the rows. Invariant: a read never asks for more than one page, so the
 * browser holds at most `MAX_PAGES` pages whatever the table's size. Plain data.
 */
import type { PagePlace } from "./row-query";

/** The window keeps at most this many pages; reading one more drops one at the far end. */
export const MAX_PAGES = 4;

/** Rows beyond the screen's each side that should be held before they show. */
const MARGIN = 60;

export interface WindowState {
  start: number;
  held: number;
  total: number;
  atStart: boolean;
  atEnd: boolean;
  prevCursor: string | null;
  nextCursor: string | null;
}

export type WindowRead =
  | { kind: "jump"; place: PagePlace; start: number }
  | { kind: "extend"; side: "start" | "end"; place: PagePlace };

/** The read that brings the rows `first`..`last` (indexes among all rows) into the window. */
export function windowRead(
  w: WindowState,
  range: { first: number; last: number },
  page: number,
): WindowRead | null {
  const end = w.start + w.held;
  const first = Math.max(0, range.first - MARGIN);
  const last = Math.min(w.total, range.last + MARGIN);
  const needStart = first < w.start && !w.atStart;
  const needEnd = last > end && !w.atEnd;
  if (!needStart && !needEnd) return null;
  if (needEnd && range.first < end + page && w.nextCursor)
    return { kind: "extend", side: "end", place: { after: w.nextCursor } };
  if (needStart && range.last >= w.start - page && w.prevCursor)
    return { kind: "extend", side: "start", place: { before: w.prevCursor } };
  if (first < page) return { kind: "jump", place: { at: "start" }, start: 0 };
  if (last >= w.total - page)
    return { kind: "jump", place: { at: "end" }, start: Math.max(0, w.total - page) };
  return { kind: "jump", place: { seek: first / Math.max(1, w.total) }, start: first };
}
