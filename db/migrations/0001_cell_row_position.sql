ALTER TABLE "cells" ADD COLUMN "row_position" bigint NOT NULL;--> statement-breakpoint
CREATE INDEX "cells_dispatch_active_idx" ON "cells" USING btree ("dispatch_id","row_position") WHERE "cells"."status" in ('queued', 'running');--> statement-breakpoint
ALTER TABLE "dispatches" DROP COLUMN "in_flight";