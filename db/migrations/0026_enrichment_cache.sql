CREATE TABLE "enrichment_cache" (
	"workspace_id" text NOT NULL,
	"enrichment_id" text NOT NULL,
	"input_key" text NOT NULL,
	"outcome" "cell_outcome",
	"outputs" jsonb,
	"filled_at" timestamp with time zone,
	"claim_id" text,
	"claimed_at" timestamp with time zone,
	CONSTRAINT "enrichment_cache_workspace_id_enrichment_id_input_key_pk" PRIMARY KEY("workspace_id","enrichment_id","input_key")
);
--> statement-breakpoint
ALTER TABLE "enrichment_cache" ADD CONSTRAINT "enrichment_cache_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "enrichment_cache_filled_idx" ON "enrichment_cache" USING btree ("filled_at");