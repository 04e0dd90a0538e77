/** The options of a table picker: a prompt (or "Loading…" until the list is in), then each table. */
export function TableOptions({
  tables,
}: {
  tables: readonly { id: string; name: string }[] | null;
}) {
  return (
    <>
      <option value="">{tables === null ? "Loading…" : "Choose a table"}</option>
      {tables?.map((t) => (
        <option key={t.id} value={t.id}>
          {t.name}
        </option>
      ))}
    </>
  );
}
