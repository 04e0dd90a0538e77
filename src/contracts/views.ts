import { z } from "zod";
import { ClientId } from "./common";
import { SortDirection } from "./rows";
import { Where } from "./where";

/** Views a table may have; the insert enforces it (store/views/create.ts). */
export const MAX_VIEWS_PER_TABLE = 100;

const ViewName = z.string().trim().min(1).max(200);
const HiddenColumns = z.array(ClientId).max(500);

/** A saved view: the rows read's `where`, `orderBy` and `dir`, and the grid's hidden columns. */
export const CreateViewRequest = z.strictObject({
  name: ViewName,
  where: Where.optional(),
  orderBy: ClientId.optional(),
  dir: SortDirection.default("asc"),
  hiddenColumns: HiddenColumns.default([]),
});
export type CreateViewRequest = z.infer<typeof CreateViewRequest>;

/** The fields given replace the view's; `where: null` and `orderBy: null` clear them. */
export const PatchViewRequest = z.strictObject({
  name: ViewName.optional(),
  where: Where.nullable().optional(),
  orderBy: ClientId.nullable().optional(),
  dir: SortDirection.optional(),
  hiddenColumns: HiddenColumns.optional(),
});
export type PatchViewRequest = z.infer<typeof PatchViewRequest>;

export const SavedView = z.object({
  id: z.string(),
  tableId: z.string(),
  name: z.string(),
  where: Where.nullable(),
  orderBy: z.string().nullable(),
  dir: SortDirection,
  hiddenColumns: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SavedView = z.infer<typeof SavedView>;

/** A table's views, oldest first. */
export const ViewList = z.object({ views: z.array(SavedView) });
export type ViewList = z.infer<typeof ViewList>;
