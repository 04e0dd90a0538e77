/**
 * A strict RFC 4180 reader for tests, written apart from src/domain/csv.ts so that what
 * we write is checked by a reader that shares none of its code or its leniency: records
 * end with CRLF (the last may omit it), only a quoted field may hold a quote, a comma, CR
 * or LF, and a closing quote is followed by a comma, a CRLF or the end. Anything else
 * throws, naming the offset.
 */
export function strictCsv(text: string): string[][] {
  const records: string[][] = [];
  if (text === "") return records;
  let record: string[] = [];
  let i = 0;
  for (;;) {
    let field = "";
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error("strict CSV: a quote is never closed");
        if (text[i] === '"') {
          if (text[i + 1] !== '"') break;
          i++;
        }
        field += text[i];
        i++;
      }
      i++;
    } else {
      for (; i < text.length && text[i] !== "," && text[i] !== "\r"; i++) {
        if (text[i] === '"' || text[i] === "\n")
          throw new Error(`strict CSV: ${JSON.stringify(text[i])} unquoted at offset ${i}`);
        field += text[i];
      }
    }
    record.push(field);
    if (i === text.length) {
      records.push(record);
      return records;
    }
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (!text.startsWith("\r\n", i))
      throw new Error(`strict CSV: ${JSON.stringify(text[i])} at offset ${i}`);
    i += 2;
    records.push(record);
    record = [];
    if (i === text.length) return records;
  }
}
