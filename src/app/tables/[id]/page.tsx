import { GridPage } from "@/ui/grid/GridPage";

type Param = string | string[] | undefined;
/** A query parameter's value (the first, if repeated). */
const first = (v: Param) => (Array.isArray(v) ? v[0] : v);

export default async function TablePage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ view?: Param; row?: Param; group?: Param }>;
}) {
  const { id } = await params;
  const query = await searchParams;
  // `?view=<id>` opens a saved view; `?row=<rowId>&group=<groupId>` opens that cell's details.
  const viewId = first(query.view);
  const rowId = first(query.row);
  const groupId = first(query.group);
  return (
    <GridPage
      tableId={id}
      {...(viewId ? { viewId } : {})}
      {...(rowId && groupId ? { cell: { rowId, groupId } } : {})}
    />
  );
}
