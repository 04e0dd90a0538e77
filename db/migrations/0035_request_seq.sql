ALTER TABLE "cells" ADD COLUMN "request_seq" bigint;--> statement-breakpoint
ALTER TABLE "dispatches" ADD COLUMN "seq" bigint DEFAULT nextval('cellflow_execution_seq') NOT NULL;--> statement-breakpoint
-- custom: runs created before this migration are older than every Stop (0: a Stop holds
-- their cascades); the column's default just numbered them now, newer than every Stop.
UPDATE "dispatches" SET "seq" = 0;--> statement-breakpoint
-- custom: the cells of tables with a Stop record keep the number the hold read before (the
-- sequence in their execution id, when a run stamped them), so no hold changes at upgrade.
UPDATE "cells" c SET "request_seq" = ('x' || substr(c."execution_id", 5, 12))::bit(48)::bigint
 WHERE c."dispatch_id" IS NOT NULL AND c."execution_id" LIKE 'ex2\_%'
   AND EXISTS (SELECT 1 FROM "stops" s WHERE s."table_id" = c."table_id");
