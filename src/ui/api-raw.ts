/**
 * The routes the browser reaches without the typed client, because it cannot express
 * them: the CSV import (its upload progress needs XMLHttpRequest), the CSV export (a
 * download link) and the table's event stream (an EventSource). Their paths are built
 * here, and only here; refusals come back as `ApiError`, like the client's.
 */
import type { Schemas } from "@/client/cellflow-client";
import { ApiError, onUnauthorized, toApiError, UI_HEADER } from "./api";

const tablePath = (tableId: string) => `/api/tables/${encodeURIComponent(tableId)}`;

/** Where the table's CSV downloads from (the session cookie goes along with a link). */
export const csvExportUrl = (tableId: string): string => `${tablePath(tableId)}/export`;

/** The table's server-sent events, replaying what came after `after` when given. */
export const tableEventsUrl = (tableId: string, after: string | null): string =>
  `${tablePath(tableId)}/events${after ? `?after=${encodeURIComponent(after)}` : ""}`;

/**
 * Imports a CSV file into a table (all rows or none). `onProgress` gets the fraction
 * sent, 0…1, which fetch cannot report.
 */
export function importCsv(
  tableId: string,
  file: Blob,
  onProgress: (fraction: number) => void,
): Promise<Schemas["CsvImported"]> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${tablePath(tableId)}/import`);
    xhr.withCredentials = true;
    xhr.setRequestHeader("content-type", "text/csv");
    for (const [name, value] of Object.entries(UI_HEADER)) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError(0, "network", "The upload did not reach the server"));
    xhr.onload = () => {
      let body: unknown = xhr.responseText;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // Not JSON (a proxy's page): the status says enough.
      }
      if (xhr.status === 401) onUnauthorized();
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as Schemas["CsvImported"]);
      else reject(toApiError(xhr.status, body));
    };
    xhr.send(file);
  });
}
