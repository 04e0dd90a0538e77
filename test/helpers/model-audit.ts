/**
 * What the engine model test judges: every change of a cell's status, execution,
 * attempt or run, of a run's cursor, status or stamping, and of a row's `a` column (what
 * the paid group's run condition reads), recorded by triggers in the transaction that
 * made it, read back in commit order (the server keeps commit timestamps: see
 * global-setup). A cell's record carries a snapshot taken in its transaction, for what
 * commit order alone cannot tell: whether an earlier commit was visible yet (see
 * `checkRunConditions`). Installed in the model test's database only.
 */

import { type Db, queryRows } from "@db/client";
import { sql } from "drizzle-orm";
import type { AuditRecord } from "./model-judge";

const STATEMENTS = [
  `create table if not exists model_audit (
     id bigserial primary key,
     txn bigint not null default txid_current(),
     kind text not null,
     op text not null,
     table_id text not null,
     row_id text,
     group_id text,
     row_position bigint,
     status text,
     execution_id text,
     attempt int,
     dispatch_id text,
     "cursor" bigint,
     "window" int,
     stamping boolean,
     outcome text,
     cached boolean
   )`,
  `create index if not exists model_audit_table_idx on model_audit (table_id)`,
  `alter table model_audit add column if not exists value jsonb`,
  // A snapshot taken inside the writing transaction (the trigger's statement's): a
  // transaction in progress in it had not become visible when this one ran.
  `alter table model_audit add column if not exists snap text`,
  `create or replace function model_audit_rows() returns trigger language plpgsql as $$
   begin
     if tg_op = 'INSERT' or (new.data -> 'a') is distinct from (old.data -> 'a') then
       insert into model_audit (kind, op, table_id, row_id, value)
       values ('row', lower(tg_op), new.table_id, new.id, new.data -> 'a');
     end if;
     return null;
   end $$`,
  `drop trigger if exists model_audit_rows on rows`,
  `create trigger model_audit_rows after insert or update on rows
     for each row execute function model_audit_rows()`,
  `create or replace function model_audit_cells() returns trigger language plpgsql as $$
   begin
     if tg_op = 'DELETE' then
       insert into model_audit (kind, op, table_id, row_id, group_id, row_position, execution_id, attempt, dispatch_id)
       values ('cell', 'delete', old.table_id, old.row_id, old.group_id, old.row_position, old.execution_id,
               old.attempt, old.dispatch_id);
     elsif tg_op = 'INSERT' or new.status is distinct from old.status
           or new.execution_id is distinct from old.execution_id or new.attempt is distinct from old.attempt
           or new.dispatch_id is distinct from old.dispatch_id then
       insert into model_audit (kind, op, table_id, row_id, group_id, row_position, status, execution_id, attempt,
                                dispatch_id, outcome, cached, snap)
       values ('cell', lower(tg_op), new.table_id, new.row_id, new.group_id, new.row_position, new.status::text,
               new.execution_id, new.attempt, new.dispatch_id, new.outcome::text,
               coalesce((new.details->>'cached')::boolean, false), pg_current_snapshot()::text);
     end if;
     return null;
   end $$`,
  `drop trigger if exists model_audit_cells on cells`,
  `create trigger model_audit_cells after insert or update or delete on cells
     for each row execute function model_audit_cells()`,
  `create or replace function model_audit_dispatches() returns trigger language plpgsql as $$
   begin
     if tg_op = 'INSERT' or new.status is distinct from old.status or new."cursor" is distinct from old."cursor"
        or new.stamping is distinct from old.stamping then
       insert into model_audit (kind, op, table_id, status, dispatch_id, "cursor", "window", stamping)
       values ('dispatch', lower(tg_op), new.table_id, new.status::text, new.id, new."cursor", new."window", new.stamping);
     end if;
     return null;
   end $$`,
  `drop trigger if exists model_audit_dispatches on dispatches`,
  `create trigger model_audit_dispatches after insert or update on dispatches
     for each row execute function model_audit_dispatches()`,
];

export async function installModelAudit(db: Db): Promise<void> {
  for (const s of STATEMENTS) await db.execute(sql.raw(s));
}

/** The server's clock in microseconds since the epoch, comparable with commit times. */
export async function serverClock(db: Db): Promise<number> {
  const [row] = await queryRows<{ us: string }>(
    db,
    sql`select (extract(epoch from clock_timestamp()) * 1000000)::bigint::text as us`,
  );
  return Number(row?.us);
}

/**
 * The table's audited history in commit order (records of one transaction together);
 * with `rows`, the changes of the rows' `a` column too (kind `row`, its `value`).
 */
export async function auditedHistory(
  db: Db,
  tableId: string,
  opts: { rows?: boolean } = {},
): Promise<AuditRecord[]> {
  return queryRows<AuditRecord>(
    db,
    sql`select id, txn::text as txn,
               (extract(epoch from pg_xact_commit_timestamp(((txn % 4294967296)::text)::xid)) * 1000000)::bigint::float8
                 as committed,
               kind, op, row_id as "rowId", group_id as "groupId", row_position::float8 as "rowPosition",
               status, execution_id as "executionId", attempt, dispatch_id as "dispatchId",
               "cursor"::float8 as "cursor", "window", stamping, outcome, cached, value,
               snap as snapshot
          from model_audit where table_id = ${tableId} ${opts.rows ? sql`` : sql`and kind <> 'row'`}
         order by committed, txn, id`,
  );
}
