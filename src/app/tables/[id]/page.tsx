import { GridPage } from "@/ui/grid/GridPage";

export default async function TablePage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<{ view?: string | string[] }>;
}) {
  const { id } = await params;
  // `?view=<id>` opens a saved view (one, the first if repeated).
  const { view } = await searchParams;
  const viewId = Array.isArray(view) ? view[0] : view;
  return <GridPage tableId={id} {...(viewId ? { viewId } : {})} />;
}
