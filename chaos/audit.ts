/**
 * Every transition of every cell, recorded by a trigger on `cells` that the chaos run
 * installs in its own databases only (it is not a migration). The audit row is written
 * in the transaction of the change it records, so it survives or vanishes with it: after
 * a Postgres crash the audit is exactly the committed history (an asynchronously
 * committed claim lost in the crash is lost from both).
 */

import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";

const STATEMENTS = [
  `create table if not exists chaos_cell_audit (
     id bigserial primary key,
     at timestamptz not null default clock_timestamp(),
     op text not null,
     table_id text not null,
     row_id text not null,
     group_id text not null,
     old_status text,
     new_status text,
     old_exec text,
     new_exec text,
     attempt int
   )`,
  `create index if not exists chaos_cell_audit_table_idx on chaos_cell_audit (table_id, id)`,
  `create or replace function chaos_cell_audit() returns trigger language plpgsql as $$
   begin
     if tg_op = 'INSERT' then
       insert into chaos_cell_audit (op, table_id, row_id, group_id, new_status, new_exec, attempt)
       values ('insert', new.table_id, new.row_id, new.group_id, new.status::text, new.execution_id, new.attempt);
     elsif tg_op = 'DELETE' then
       insert into chaos_cell_audit (op, table_id, row_id, group_id, old_status, old_exec, attempt)
       values ('delete', old.table_id, old.row_id, old.group_id, old.status::text, old.execution_id, old.attempt);
     elsif new.status is distinct from old.status or new.execution_id is distinct from old.execution_id then
       insert into chaos_cell_audit (op, table_id, row_id, group_id, old_status, new_status, old_exec, new_exec, attempt)
       values ('update', new.table_id, new.row_id, new.group_id, old.status::text, new.status::text,
               old.execution_id, new.execution_id, new.attempt);
     end if;
     return null;
   end $$`,
  `drop trigger if exists chaos_cell_audit on cells`,
  `create trigger chaos_cell_audit after insert or update or delete on cells
     for each row execute function chaos_cell_audit()`,
];

export async function installAudit(db: Db): Promise<void> {
  for (const s of STATEMENTS) await db.execute(sql.raw(s));
}

export interface Transition {
  id: number;
  at: number;
  op: "insert" | "update" | "delete";
  rowId: string;
  groupId: string;
  oldStatus: string | null;
  newStatus: string | null;
  oldExec: string | null;
  newExec: string | null;
  attempt: number | null;
}

/**
 * A table's transitions in id order. Per cell that is commit order: the audit row's id
 * is drawn after the cell's row lock was taken, and that lock is held until commit.
 */
export async function transitionsOf(db: Db, tableId: string): Promise<Transition[]> {
  const out: Transition[] = [];
  // Paged: a 20,000-cell run has ~100,000 of them.
  for (let after = 0; ; ) {
    const page = await queryRows<Transition>(
      db,
      sql`select id, (extract(epoch from at) * 1000)::float8 as at, op, row_id as "rowId",
                 group_id as "groupId", old_status as "oldStatus", new_status as "newStatus",
                 old_exec as "oldExec", new_exec as "newExec", attempt
            from chaos_cell_audit where table_id = ${tableId} and id > ${after}
           order by id limit 20000`,
    );
    out.push(...page);
    const last = page.at(-1);
    if (!last || page.length < 20_000) return out;
    after = last.id;
  }
}
