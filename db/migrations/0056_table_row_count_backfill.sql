-- custom: the row count of every table that existed before the column (added at 0), counted
-- once here; from now on the statements that insert and delete rows move it.
UPDATE "tables" t SET "row_count" = c.n
  FROM (SELECT "table_id", count(*) AS n FROM "rows" GROUP BY "table_id") c
 WHERE c."table_id" = t."id";
