/**
 * What one CSV import takes: 1,000,000 rows and 500 MiB (API.md), or what the deployment
 * sets (CELLFLOW_IMPORT_MAX_ROWS, CELLFLOW_IMPORT_MAX_BYTES), read per import so a test
 * can lower them. Past either, the import answers 413 and keeps nothing.
 */
import { readEnv } from "@/config/env";

export const MAX_IMPORT_ROWS = 1_000_000;
export const MAX_IMPORT_BYTES = 500 * 1024 * 1024;

export function csvImportLimits(): { rows: number; bytes: number } {
  const env = readEnv();
  return {
    rows: env.CELLFLOW_IMPORT_MAX_ROWS ?? MAX_IMPORT_ROWS,
    bytes: env.CELLFLOW_IMPORT_MAX_BYTES ?? MAX_IMPORT_BYTES,
  };
}
