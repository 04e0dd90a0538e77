/**
 * A `rows` event never lists more than ROW_EVENT_IDS_UP_TO ids (issue 33): an insert or
 * delete of more rows in one statement counts them instead, and fits the stream's
 * contract either way.
 */
import { describe, expect, it } from "vitest";
import { ROW_EVENT_IDS_UP_TO } from "@/contracts/events";
import { rowsEventOf } from "@/store/rows/rows-event";
import { eventContractBreach } from "../helpers/event-contract";

const ids = (n: number) => Array.from({ length: n }, (_, k) => `row_${k}`);

describe("rows event of an insert or delete", () => {
  it("lists the ids up to the threshold", () => {
    const e = rowsEventOf("insert", ids(ROW_EVENT_IDS_UP_TO));
    expect(e).toEqual({ op: "insert", rowIds: ids(ROW_EVENT_IDS_UP_TO) });
    expect(eventContractBreach("rows", e)).toBeNull();
  });

  it("counts them past it, with no id", () => {
    const e = rowsEventOf("delete", ids(ROW_EVENT_IDS_UP_TO + 1));
    expect(e).toEqual({ op: "delete", rowIds: [], count: ROW_EVENT_IDS_UP_TO + 1, bulk: true });
    expect(eventContractBreach("rows", e)).toBeNull();
  });
});
