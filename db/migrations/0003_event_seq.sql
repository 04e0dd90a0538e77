CREATE SEQUENCE "public"."event_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "seq" bigint;--> statement-breakpoint
CREATE INDEX "events_table_seq_idx" ON "events" USING btree ("table_id","seq");--> statement-breakpoint
CREATE INDEX "events_unsequenced_idx" ON "events" USING btree ("table_id","id") WHERE "events"."seq" is null;