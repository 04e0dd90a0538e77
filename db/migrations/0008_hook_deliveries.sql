CREATE TABLE "hook_deliveries" (
	"hook_id" text NOT NULL,
	"signature_digest" text NOT NULL,
	"status_code" integer,
	"response" json,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "hook_deliveries_hook_id_signature_digest_pk" PRIMARY KEY("hook_id","signature_digest")
);
--> statement-breakpoint
ALTER TABLE "hook_deliveries" ADD CONSTRAINT "hook_deliveries_hook_id_hooks_id_fk" FOREIGN KEY ("hook_id") REFERENCES "public"."hooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hook_deliveries_created_idx" ON "hook_deliveries" USING btree ("created_at");