import { GridPage } from "@/ui/grid/GridPage";

export default async function TablePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <GridPage tableId={id} />;
}
