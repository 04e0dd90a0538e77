/**
 * `cellflow import <table> <file.csv>`: the file streamed as the request body (never read
 * whole into memory), with its length declared so an oversized file is refused before it
 * is sent. On a terminal, stderr shows the bytes sent; stdout gets the inserted count.
 */
import fs from "node:fs";
import path from "node:path";
import { MAX_IMPORT_BYTES } from "@/limits/csv-import";
import { parseCommand } from "../args";
import { refusalOf } from "../connection";
import { type CliContext, connect } from "../context";
import { apiError, type CliResult, done, usageError } from "../failure";
import { IMPORT } from "../help";
import { findTable } from "../table-ref";

const CHUNK = 256 * 1024;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

async function openFile(
  file: string,
): Promise<CliResult<{ handle: fs.promises.FileHandle; size: number }>> {
  try {
    const handle = await fs.promises.open(file, "r");
    return { ok: true, value: { handle, size: (await handle.stat()).size } };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return usageError(`cannot read ${file}${code ? ` (${code})` : ""}`);
  }
}

export async function importCommand(argv: readonly string[], ctx: CliContext): Promise<CliResult> {
  const args = parseCommand(
    { name: "import", positionals: ["table", "file.csv"], options: {} },
    argv,
  );
  if (!args.ok) return args;
  if (args.value.help) {
    ctx.stdout.write(`${IMPORT}\n`);
    return done;
  }
  const [tableRef = "", file = ""] = args.value.positionals;
  const opened = await openFile(file);
  if (!opened.ok) return opened;
  const { handle, size } = opened.value;
  try {
    if (size > MAX_IMPORT_BYTES)
      return apiError(
        `${file} is ${formatBytes(size)}; an import takes at most ${formatBytes(MAX_IMPORT_BYTES)}`,
      );
    const conn = connect(ctx);
    if (!conn.ok) return conn;
    const table = await findTable(conn.value, tableRef);
    if (!table.ok) return table;

    const show = ctx.stderr.isTTY === true;
    const name = path.basename(file);
    let sent = 0;
    let shownAt = 0;
    const note = (text: string) => {
      if (show) ctx.stderr.write(`\r${text}\x1b[K`);
    };
    const progress = (force = false) => {
      const now = Date.now();
      if (!force && now - shownAt < 100) return;
      shownAt = now;
      const pct = size > 0 ? Math.floor((sent / size) * 100) : 100;
      note(`uploading ${name}: ${formatBytes(sent)} / ${formatBytes(size)} (${pct}%)`);
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const buf = Buffer.allocUnsafe(CHUNK);
        const { bytesRead } = await handle.read(buf, 0, CHUNK, null);
        if (bytesRead === 0) {
          progress(true);
          note(`uploaded ${formatBytes(sent)}; the server is checking and inserting the rows…`);
          controller.close();
          return;
        }
        sent += bytesRead;
        progress();
        controller.enqueue(buf.subarray(0, bytesRead));
      },
    });
    progress(true);
    const init: RequestInit & { duplex: "half" } = {
      method: "POST",
      headers: { "content-type": "text/csv; charset=utf-8", "content-length": String(size) },
      body,
      duplex: "half",
    };
    const res = await conn.value.request(
      `/api/tables/${encodeURIComponent(table.value.id)}/import`,
      init,
    );
    note("");
    if (!res.ok) return res;
    if (!res.value.ok) return { ok: false, reason: await refusalOf(res.value) };
    const answer = (await res.value.json()) as { inserted: number };
    ctx.stdout.write(
      `inserted ${answer.inserted} row${answer.inserted === 1 ? "" : "s"} into ${table.value.name}\n`,
    );
    return done;
  } finally {
    await handle.close();
  }
}
