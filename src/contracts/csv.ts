import { z } from "zod";

/** `POST /api/tables/:id/import` answers with how many rows it inserted. */
export const CsvImported = z.object({ inserted: z.number().int() });
export type CsvImported = z.infer<typeof CsvImported>;
